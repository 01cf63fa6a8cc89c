#include "settle/telemetry/otlp_headers.h"

#include "settle/core/ascii.h"
#include "settle/core/header_syntax.h"
#include "settle/core/url.h"

namespace settle::telemetry {
namespace {

std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Why `name` (with its value) cannot be sent with an export, or OK.
Status CheckHeader(const std::string& name, const std::string& value) {
  for (const std::string_view framing :
       {"host", "content-type", "content-length", "transfer-encoding", "connection"}) {
    if (EqualsIgnoreAsciiCase(name, framing)) {
      return Status::InvalidArgument(name + " is set by settled itself");
    }
  }
  if (!IsValidHeaderValue(value)) {
    return Status::InvalidArgument("the value of " + name + " is not a valid header value");
  }
  return Status::Ok();
}

// The name of "name=value" `entry`, or empty when it has none that is a valid header name.
std::string NameOf(std::string_view entry, std::size_t equals) {
  if (equals == std::string_view::npos) return {};
  std::string name(Trimmed(entry.substr(0, equals)));
  return IsValidHeaderName(name) ? name : std::string();
}

}  // namespace

Result<OtlpHeaders> ParseOtlpHeaders(std::string_view list) {
  OtlpHeaders headers;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view entry = Trimmed(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (entry.empty()) continue;
    const std::size_t equals = entry.find('=');
    const std::string name = NameOf(entry, equals);
    if (name.empty()) {
      return Status::InvalidArgument("'" + std::string(entry) + "' is not name=value");
    }
    // Percent-decoded; a '+' is itself (FormDecode would make it a space).
    std::string escaped;
    for (const char c : Trimmed(entry.substr(equals + 1))) {
      if (c == '+') {
        escaped += "%2B";
      } else {
        escaped += c;
      }
    }
    std::string value = FormDecode(escaped);
    if (Status s = CheckHeader(name, value); !s.ok()) return s;
    headers.emplace_back(name, std::move(value));
  }
  return headers;
}

Result<OtlpHeaders> ParseOtlpHeaderLines(std::string_view text) {
  OtlpHeaders headers;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = Trimmed(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = "line " + std::to_string(line_number) + ": ";
    const std::size_t equals = line.find('=');
    const std::string name = NameOf(line, equals);
    // The line is not quoted: it may be a secret that lacks its name.
    if (name.empty()) return Status::InvalidArgument(where + "expected name=value");
    const std::string value(Trimmed(line.substr(equals + 1)));
    if (Status s = CheckHeader(name, value); !s.ok()) {
      return Status::InvalidArgument(where + s.message());
    }
    headers.emplace_back(name, value);
  }
  return headers;
}

}  // namespace settle::telemetry
