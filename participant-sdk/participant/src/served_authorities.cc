#include "settle/sdk/served_authorities.h"

#include <algorithm>
#include <charconv>

#include "settle/core/ascii.h"
#include "settle/core/url.h"

namespace settle::sdk {
namespace {

// Checks one configured name, "host:port" or "[v6]:port": InvalidArgument saying what is wrong.
Status CheckName(const std::string& name, const std::string& option_name) {
  const auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(option_name + ": \"" + name + "\" " + why +
                                   " (host:port as callers dial it, e.g. bank.internal:8443)");
  };
  if (name.empty()) return refuse("is empty");
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '/' || c == '@' || c == '?' || c == '#' || c == ',') {
      return refuse("holds a character a host and port cannot");
    }
  }
  std::size_t colon = std::string::npos;
  if (name.front() == '[') {
    const std::size_t close = name.find(']');
    if (close == std::string::npos || close + 1 >= name.size() || name[close + 1] != ':') {
      return refuse("needs a port after its bracketed address");
    }
    colon = close + 1;
  } else {
    colon = name.rfind(':');
    if (colon == std::string::npos) return refuse("needs a port");
    if (name.find(':') != colon) return refuse("is an IPv6 address without brackets");
  }
  if (colon == 0) return refuse("needs a host");
  const std::string_view port_text = std::string_view(name).substr(colon + 1);
  int port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc() || end != port_text.data() + port_text.size() ||
      port < 1 || port > 65535) {
    return refuse("has no port in 1..65535");
  }
  return Status::Ok();
}

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "[::1]" ||
         EqualsIgnoreAsciiCase(host, "localhost");
}

}  // namespace

bool IsWildcardHost(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

Result<std::vector<std::string>> ServedAuthorities(const std::vector<std::string>& configured,
                                                   const std::string& listen_host, int bound_port,
                                                   const std::string& option_name) {
  std::vector<std::string> names;
  if (!configured.empty()) {
    for (const std::string& name : configured) {
      if (Status s = CheckName(name, option_name); !s.ok()) return s;
      std::string lowered = AsciiLowercase(name);
      if (std::find(names.begin(), names.end(), lowered) == names.end()) {
        names.push_back(std::move(lowered));
      }
    }
    return names;
  }
  if (IsWildcardHost(listen_host)) {
    return Status::InvalidArgument(
        option_name + ": required when listening on every address (\"" + listen_host +
        "\") with signed calls: the names this participant's callers dial it by, as settled "
        "signs them (host:port), so that a call signed for another participant is refused");
  }
  names.push_back(AsciiLowercase(JoinHostPort(listen_host, bound_port)));
  if (IsLoopback(listen_host)) {
    for (const char* other : {"localhost", "127.0.0.1"}) {
      std::string name = JoinHostPort(other, bound_port);
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

}  // namespace settle::sdk
