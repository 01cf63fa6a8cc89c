#include "settle/core/url.h"

#include <charconv>

#include "settle/core/ascii.h"

namespace settle {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

template <typename Keep>
std::string EncodeUnless(std::string_view s, Keep keep) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (keep(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

template <typename Params>
std::string AppendParams(std::string target, const Params& params) {
  const std::size_t query = target.find('?');
  char sep = query == std::string::npos ? '?' : '&';
  // A query that is still empty ("/a?") or ends in '&' needs no extra separator. Only the
  // first '?' starts the query: a later one ("/a?next=?") is part of a value, and a '&' in
  // the path ("/a&b") is a character of the path.
  if (query != std::string::npos && (query + 1 == target.size() || target.back() == '&')) {
    sep = '\0';
  }
  for (const auto& [key, value] : params) {
    if (sep != '\0') target += sep;
    target += key;
    target += '=';
    target += EncodeUnless(value, IsUnreserved);
    sep = '&';
  }
  return target;
}

// A host name or IPv4 address: letters, digits, '-', '.', '_' and '~' (RFC 3986's unreserved
// characters; DNS names use fewer).
bool IsRegName(std::string_view host) {
  for (unsigned char c : host) {
    if (!IsUnreserved(c)) return false;
  }
  return true;
}

// What goes between '[' and ']': an IPv6 address, possibly ending in an IPv4 one. Zone ids
// ("%25eth0") are not supported.
bool IsIpv6Literal(std::string_view host) {
  if (host.find(':') == std::string_view::npos) return false;
  for (unsigned char c : host) {
    if (HexDigitValue(static_cast<char>(c)) < 0 && c != ':' && c != '.') return false;
  }
  return true;
}

// The scheme is case-insensitive (RFC 3986 section 3.1).
bool SchemeIs(std::string_view scheme, std::string_view expected) {
  return EqualsIgnoreAsciiCase(scheme, expected);
}

}  // namespace

std::string PercentEncode(std::string_view s) { return EncodeUnless(s, IsUnreserved); }

std::string FormDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexDigitValue(s[i + 1]) >= 0 &&
               HexDigitValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigitValue(s[i + 1]) * 16 + HexDigitValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string PercentEncodeNonAscii(std::string_view s) {
  return EncodeUnless(s, [](unsigned char c) { return c < 0x80; });
}

std::string Url::TargetWith(
    std::initializer_list<std::pair<std::string_view, std::string_view>> params) const {
  return AppendParams(path_and_query, params);
}

std::string Url::TargetWith(const std::vector<std::pair<std::string, std::string>>& params) const {
  return AppendParams(path_and_query, params);
}

std::string JoinHostPort(std::string_view host, int port) {
  const bool bare_ipv6 = host.find(':') != std::string_view::npos && !host.starts_with('[');
  return (bare_ipv6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" +
         std::to_string(port);
}

std::string Url::HostPort() const { return JoinHostPort(host, port); }

std::string Url::Origin() const { return (tls ? "https://" : "http://") + HostPort(); }

Result<Url> ParseUrl(std::string_view url) {
  if (url.size() > kMaxUrlLength) {
    return Status::InvalidArgument("is longer than " + std::to_string(kMaxUrlLength) +
                                   " characters");
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c == 0x7f) {
      return Status::InvalidArgument("contains whitespace or control characters");
    }
  }
  Url out;
  const std::size_t scheme_end = url.find("://");
  const std::string_view scheme = url.substr(0, scheme_end);
  if (scheme_end != std::string_view::npos && SchemeIs(scheme, "https")) {
    out.tls = true;
    out.port = 443;
  } else if (scheme_end == std::string_view::npos || !SchemeIs(scheme, "http")) {
    return Status::InvalidArgument("must be an http:// or https:// URL");
  }
  std::string_view rest = url.substr(scheme_end + 3);
  if (rest.find('#') != std::string_view::npos) {
    return Status::InvalidArgument("must not contain a fragment");
  }
  const std::size_t path_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_start);
  if (path_start == std::string_view::npos) {
    out.path_and_query = "/";
  } else if (rest[path_start] == '?') {
    out.path_and_query = "/" + std::string(rest.substr(path_start));
  } else {
    out.path_and_query = std::string(rest.substr(path_start));
  }
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument("must not contain user information");
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("has an unclosed '['");
    host = authority.substr(1, close - 1);
    if (!IsIpv6Literal(host)) {
      return Status::InvalidArgument("has something other than an IPv6 address in [ ]");
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Status::InvalidArgument("has junk after the host");
      port = after.substr(1);
      if (port.empty()) return Status::InvalidArgument("has an empty port");
    }
  } else {
    const std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return Status::InvalidArgument("has an empty port");
    }
    if (!IsRegName(host)) {
      return Status::InvalidArgument(
          "has a host with characters other than letters, digits, "
          "'-', '.', '_' and '~'");
    }
  }
  if (host.empty()) return Status::InvalidArgument("has no host");
  out.host = std::string(host);
  if (!port.empty()) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || ptr != port.data() + port.size() || value < 1 || value > 65535) {
      return Status::InvalidArgument("has an invalid port");
    }
    out.port = value;
  }
  return out;
}

}  // namespace settle
