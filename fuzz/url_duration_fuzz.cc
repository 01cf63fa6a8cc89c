// ParseUrl (branch URLs from clients, http:// and https://), ParseGrpcTarget (gRPC methods)
// and ParseDuration (command-line durations). All three run on every input.
//
// A URL it accepts must be what url.h promises, must come back the same when written out
// again from its parts (Origin() and path_and_query, with the scheme in any case, and with
// the default port left out), and the request head the branch caller writes for it must be
// one Settle's own RequestReader takes, carrying the target, the Host and the gid intact.
//
// A duration it accepts must be within ten years, and FormatDuration's spelling of it must
// parse back to it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "settle/core/duration_text.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"
#include "settle/net/message.h"
#include "settle/net/request_reader.h"
#include "wire.h"  // the network room's own: the request head a client writes

namespace settle::fuzz {
namespace {

constexpr std::int64_t kTenYearsMillis = 10LL * 365 * 24 * 3600 * 1000;

bool IsPlain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  });
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         net::EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// url.h: a host is a name or IPv4 address (letters, digits, "-._~") or an IPv6 address, kept
// without its brackets.
bool IsHost(std::string_view host) {
  if (host.find(':') != std::string_view::npos) {
    return std::all_of(host.begin(), host.end(),
                       [](char c) { return IsHexDigit(c) || c == ':' || c == '.'; });
  }
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '.' || c == '_' || c == '~';
  });
}

void CheckSameUrl(const Result<Url>& again, const Url& url) {
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->tls == url.tls);
  FUZZ_CHECK(again->host == url.host);
  FUZZ_CHECK(again->port == url.port);
  FUZZ_CHECK(again->path_and_query == url.path_and_query);
}

// The head and body a branch call to `url` puts on the wire (http_branch_caller.cc, wire.cc),
// read back by the reader settled and the SDK's participants serve with.
void CheckBranchCall(const Url& url, std::string_view gid) {
  const std::string target = url.TargetWith({{"gid", gid}, {"op", "confirm"}});
  const std::string encoded_path = PercentEncodeNonAscii(url.path_and_query);
  const std::string encoded_target = PercentEncodeNonAscii(target);
  FUZZ_CHECK(encoded_target.compare(0, encoded_path.size(), encoded_path) == 0);

  const std::string body = "{}";
  const Result<std::string> head = net::RequestHead("POST", target, url, {}, body.size());
  FUZZ_CHECK(head.ok());
  net::RequestReader reader;
  reader.Append(*head + body);
  FUZZ_CHECK(reader.Parse() == net::RequestReader::Step::kRequest);
  const net::Request request = reader.TakeRequest();
  FUZZ_CHECK(!reader.mid_request());  // the whole call, nothing more
  FUZZ_CHECK(request.method == "POST");
  FUZZ_CHECK(request.target == encoded_target);
  FUZZ_CHECK(request.body == body);
  const std::string* host = request.Header("Host");
  FUZZ_CHECK(host != nullptr && *host == url.HostPort());
  const auto [first, last] = request.params.equal_range("gid");
  FUZZ_CHECK(std::any_of(first, last, [&](const auto& p) { return p.second == gid; }));
}

void FuzzUrl(std::string_view text, std::string_view gid) {
  const Result<Url> url = ParseUrl(text);
  if (!url) {
    FUZZ_CHECK(url.status().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(!url.status().message().empty());
    return;
  }
  FUZZ_CHECK(text.size() <= kMaxUrlLength);
  // https:// (in any case) and only it is TLS, on 443 unless a port is given.
  FUZZ_CHECK(url->tls == StartsWithIgnoreCase(text, "https://"));
  FUZZ_CHECK(url->tls || StartsWithIgnoreCase(text, "http://"));
  FUZZ_CHECK(!url->host.empty() && IsHost(url->host));
  FUZZ_CHECK(url->port >= 1 && url->port <= 65535);
  FUZZ_CHECK(!url->path_and_query.empty() && url->path_and_query.front() == '/');
  FUZZ_CHECK(IsPlain(url->path_and_query));
  FUZZ_CHECK(url->path_and_query.find('#') == std::string::npos);

  const bool ipv6 = url->host.find(':') != std::string::npos;
  const std::string bracketed = ipv6 ? "[" + url->host + "]" : url->host;
  const std::string scheme = url->tls ? "https://" : "http://";
  FUZZ_CHECK(url->HostPort() == bracketed + ":" + std::to_string(url->port));
  FUZZ_CHECK(url->Origin() == scheme + url->HostPort());

  // Written out again from its parts (as pools key connections by Origin()), the URL parses to
  // itself; so it does with the scheme in capitals.
  const std::string again = url->Origin() + url->path_and_query;
  if (again.size() <= kMaxUrlLength) {
    CheckSameUrl(ParseUrl(again), *url);
    std::string shouted = again;
    std::transform(shouted.begin(), shouted.begin() + static_cast<std::ptrdiff_t>(scheme.size()),
                   shouted.begin(), [](char c) {
                     return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
                   });
    CheckSameUrl(ParseUrl(shouted), *url);
  }
  // Without a port, the scheme's own.
  const std::string portless = scheme + bracketed + url->path_and_query;
  if (portless.size() <= kMaxUrlLength) {
    const Result<Url> defaulted = ParseUrl(portless);
    FUZZ_CHECK(defaulted.ok());
    FUZZ_CHECK(defaulted->tls == url->tls);
    FUZZ_CHECK(defaulted->port == (url->tls ? 443 : 80));
  }

  CheckBranchCall(*url, gid);
}

void FuzzDuration(std::string_view text) {
  const Result<Duration> d = ParseDuration(text);
  if (!d) {
    FUZZ_CHECK(d.status().code() == StatusCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(d->count() >= 0 && d->count() <= kTenYearsMillis);
  const std::string spelled = FormatDuration(*d);
  const Result<Duration> back = ParseDuration(spelled);
  FUZZ_CHECK(back.ok() && *back == *d);
}

}  // namespace
}  // namespace settle::fuzz

namespace settle::fuzz {

// A gRPC method's address (grpc_target.h): refused with a message, or a host, a port and a
// method of two parts that the origin names again.
void FuzzGrpcTarget(std::string_view text) {
  const Result<GrpcTarget> target = ParseGrpcTarget(text);
  if (!target) {
    FUZZ_CHECK(target.status().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(!target.status().message().empty());
    return;
  }
  FUZZ_CHECK(LooksLikeGrpcTarget(text));
  FUZZ_CHECK(!target->host.empty());
  FUZZ_CHECK(target->port >= 1 && target->port <= 65535);
  FUZZ_CHECK(target->method.size() >= 4 && target->method.front() == '/');
  FUZZ_CHECK(std::count(target->method.begin(), target->method.end(), '/') == 2);
  FUZZ_CHECK(target->Origin().ends_with(target->HostPort()));
}

}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Some arbitrary bytes for the gid: the last few of the input.
  const std::string_view gid = text.substr(text.size() - std::min<std::size_t>(text.size(), 12));
  FuzzUrl(text, gid);
  FuzzGrpcTarget(text);
  FuzzDuration(text);
  return 0;
}
