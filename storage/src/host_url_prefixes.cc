#include "host_url_prefixes.h"

#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"

namespace settle::storage {
namespace {

Status NotAnOrigin(const std::string& origin) {
  return Status::InvalidArgument(
      "host: expected a participant host as scheme://host:port in lower case "
      "(http://bank:8080), got '" +
      origin + "'");
}

// "bank", "[::1]": the host as a url writes it without a port.
std::string BareHost(const std::string& host) {
  return host.find(':') == std::string::npos ? host : "[" + host + "]";
}

}  // namespace

Result<std::vector<std::string>> HostUrlPrefixes(const std::string& origin) {
  const bool grpc = origin.starts_with("grpc://") || origin.starts_with("grpcs://");
  const bool http = origin.starts_with("http://") || origin.starts_with("https://");
  if (!grpc && !http) return NotAnOrigin(origin);
  bool tls = false;
  std::string host;
  int port = 0;
  std::string canonical;
  if (grpc) {
    Result<GrpcTarget> target = ParseGrpcOrigin(origin);
    if (!target) return NotAnOrigin(origin);
    tls = target->tls;
    host = target->host;
    port = target->port;
    canonical = AsciiLowercase(target->Origin());
  } else {
    Result<Url> url = ParseUrl(origin);
    if (!url || url->path_and_query != "/") return NotAnOrigin(origin);
    tls = url->tls;
    host = url->host;
    port = url->port;
    canonical = AsciiLowercase(url->Origin());
  }
  // One spelling: what OriginOf gives, so that one host is one filter.
  if (canonical != origin) return NotAnOrigin(origin);

  const std::string scheme = grpc ? (tls ? "grpcs://" : "grpc://") : (tls ? "https://" : "http://");
  std::vector<std::string> prefixes = {origin};
  const bool default_port = port == (tls ? 443 : 80);
  if (default_port) prefixes.push_back(scheme + BareHost(host));
  // DTM's form always names its port.
  if (grpc && !tls) prefixes.push_back(JoinHostPort(host, port));
  return prefixes;
}

}  // namespace settle::storage
