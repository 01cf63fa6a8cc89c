#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"

namespace settle {

inline constexpr std::size_t kMaxUrlLength = 2048;

// A parsed absolute http:// or https:// URL: a participant's branch URL, the coordinator's
// API base, a webhook.
// "host:port", brackets around an IPv6 address ("[::1]:80"); a host given in brackets
// already keeps them.
std::string JoinHostPort(std::string_view host, int port);

struct Url {
  bool tls = false;            // https
  std::string host;            // "127.0.0.1", "localhost"; "[::1]" is stored as "::1"
  int port = 80;               // 443 by default for https
  std::string path_and_query;  // always starts with '/'

  // path_and_query with `key=value` parameters appended after '?' or '&' (none after a query
  // that is empty or ends in '&'). Values are percent-encoded. The one way a branch call's
  // target is built, by settled and by the SDK's initiators (docs/protocol.md §4.1, §6.1).
  std::string TargetWith(
      std::initializer_list<std::pair<std::string_view, std::string_view>> params) const;
  std::string TargetWith(const std::vector<std::pair<std::string, std::string>>& params) const;

  // "host:port", with brackets around an IPv6 address: what the Host header and messages say.
  std::string HostPort() const;
  // "http://host:port" or "https://host:port": one keep-alive pool per origin.
  std::string Origin() const;
};

// InvalidArgument (message without a field name) unless `url` is
// "http[s]://host[:port][/...]" (the scheme in any case) with a non-empty host, a port in
// 1..65535, no userinfo, no fragment, no whitespace or control characters, and at most
// kMaxUrlLength characters.
Result<Url> ParseUrl(std::string_view url);

// Every byte but A-Z a-z 0-9 - _ . ~ as %XX: for query parameter values.
std::string PercentEncode(std::string_view s);
// A query parameter's name or value as a form decodes it: '+' is a space, %XX (either case)
// the byte XX; a '%' not followed by two hex digits stays as it is.
std::string FormDecode(std::string_view s);
// Only bytes >= 0x80 as %XX: makes a request target that holds raw UTF-8 safe to send while
// leaving its reserved characters (/ ? & = +) as they are.
std::string PercentEncodeNonAscii(std::string_view s);

}  // namespace settle
