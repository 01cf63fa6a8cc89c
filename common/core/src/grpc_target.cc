#include "settle/core/grpc_target.h"

#include "settle/core/ascii.h"
#include "settle/core/url.h"

namespace settle {
namespace {

bool IsMethodPart(std::string_view part) {
  if (part.empty()) return false;
  for (char c : part) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string GrpcTarget::HostPort() const { return JoinHostPort(host, port); }

std::string GrpcTarget::Origin() const { return (tls ? "grpcs://" : "grpc://") + HostPort(); }

bool LooksLikeGrpcTarget(std::string_view url) {
  return StartsWithIgnoreAsciiCase(url, "grpc://") || StartsWithIgnoreAsciiCase(url, "grpcs://") ||
         url.find("://") == std::string_view::npos;
}

namespace {

// The scheme, host and port of `url` in one of the forms of grpc_target.h, and its path (and
// query) as ParseUrl leaves it ("/" when there is none).
Result<std::pair<GrpcTarget, std::string>> SplitGrpcUrl(std::string_view url) {
  GrpcTarget target;
  std::string as_http;
  if (StartsWithIgnoreAsciiCase(url, "grpcs://")) {
    target.tls = true;
    as_http = "https://" + std::string(url.substr(8));
  } else if (StartsWithIgnoreAsciiCase(url, "grpc://")) {
    as_http = "http://" + std::string(url.substr(7));
  } else if (url.find("://") == std::string_view::npos) {
    // DTM's form names its port: a host alone is no gRPC address.
    const std::size_t slash = url.find('/');
    const std::string_view authority = url.substr(0, slash);
    if (authority.empty() || authority.find(':') == std::string_view::npos ||
        authority.back() == ']') {
      return Status::InvalidArgument(
          "must be an http:// or https:// URL, or a gRPC method: host:port/package.Service/Method "
          "(or grpc://, grpcs://)");
    }
    as_http = "http://" + std::string(url);
  } else {
    return Status::InvalidArgument("must be a gRPC method: grpc:// or grpcs://");
  }
  Result<Url> parsed = ParseUrl(as_http);
  if (!parsed) {
    std::string problem = parsed.status().message();
    if (problem.starts_with("must be an http")) problem = "has no host";
    return Status::InvalidArgument("is not a gRPC method: it " + problem);
  }
  target.host = parsed->host;
  target.port = parsed->port;
  return std::make_pair(std::move(target), parsed->path_and_query);
}

}  // namespace

Result<GrpcTarget> ParseGrpcTarget(std::string_view url) {
  Result<std::pair<GrpcTarget, std::string>> split = SplitGrpcUrl(url);
  if (!split) return split.status();
  auto& [target, path] = *split;
  const std::size_t second = path.find('/', 1);
  if (path.find('?') != std::string::npos || second == std::string::npos ||
      !IsMethodPart(std::string_view(path).substr(1, second - 1)) ||
      !IsMethodPart(std::string_view(path).substr(second + 1))) {
    return Status::InvalidArgument(
        "must name a gRPC method as /package.Service/Method, without a query");
  }
  target.method = std::move(path);
  return std::move(target);
}

Result<GrpcTarget> ParseGrpcOrigin(std::string_view url) {
  Result<std::pair<GrpcTarget, std::string>> split = SplitGrpcUrl(url);
  if (!split || split->second != "/") {
    return Status::InvalidArgument("expected grpc://host:port, grpcs://host:port or host:port");
  }
  return std::move(split->first);
}

bool IsGrpcMetadataHeader(std::string_view name, std::string_view value) {
  if (name.empty() || StartsWithIgnoreAsciiCase(name, "grpc-")) return false;
  if (name.size() >= 4 && StartsWithIgnoreAsciiCase(name.substr(name.size() - 4), "-bin"))
    return false;
  for (char c : name) {
    c = AsciiLower(c);
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace settle
