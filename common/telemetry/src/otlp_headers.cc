#include "settle/telemetry/otlp_headers.h"

#include "settle/core/ascii.h"
#include "settle/core/config_lines.h"
#include "settle/core/header_syntax.h"
#include "settle/core/url.h"

namespace settle::telemetry {
namespace {

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
  std::string name(TrimBlanks(entry.substr(0, equals)));
  return IsValidHeaderName(name) ? name : std::string();
}

}  // namespace

Result<OtlpHeaders> ParseOtlpHeaders(std::string_view list) {
  OtlpHeaders headers;
  std::size_t position = 0;  // of the entry, counting from 1, empty ones included
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view entry = TrimBlanks(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    ++position;
    if (entry.empty()) continue;
    const std::size_t equals = entry.find('=');
    const std::string name = NameOf(entry, equals);
    // Not quoted: an entry without its name may be a bare key.
    if (name.empty()) {
      return Status::InvalidArgument("entry " + std::to_string(position) +
                                     " is not name=value (a header name, '=', its value)");
    }
    // Percent-decoded; a '+' is itself (FormDecode would make it a space).
    std::string escaped;
    for (const char c : TrimBlanks(entry.substr(equals + 1))) {
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
  const Status read = ForEachConfigLine(text, [&headers](std::string_view line) {
    const std::size_t equals = line.find('=');
    const std::string name = NameOf(line, equals);
    // The line is not quoted: it may be a secret that lacks its name.
    if (name.empty()) return Status::InvalidArgument("expected name=value");
    std::string value(TrimBlanks(line.substr(equals + 1)));
    if (Status s = CheckHeader(name, value); !s.ok()) return s;
    headers.emplace_back(name, std::move(value));
    return Status::Ok();
  });
  if (!read.ok()) return read;
  return headers;
}

}  // namespace settle::telemetry
