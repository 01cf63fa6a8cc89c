#include "settle/telemetry/otlp_json.h"

#include <cstdio>

namespace settle::telemetry {
namespace {

// The JSON is written straight into one string, without a document tree: the exporter encodes
// every span settled reports, on an I/O thread.

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 when it does not start with one.
std::size_t Utf8SequenceLength(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

// `text` as a JSON string: quotes, backslashes and control characters escaped, a byte that is
// not part of well-formed UTF-8 (a participant's URL or reason may hold one) replaced by
// U+FFFD, so that the body always parses.
void AppendString(std::string& out, std::string_view text) {
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t n = Utf8SequenceLength(text.substr(i));
      if (n == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
}

void AppendMember(std::string& out, std::string_view key, std::string_view value) {
  out += '"';
  out += key;  // our own keys: nothing to escape
  out += "\":";
  AppendString(out, value);
}

// int64 values and times: decimal strings, as protobuf's JSON mapping writes 64-bit integers.
void AppendInt64Member(std::string& out, std::string_view key, std::int64_t value) {
  out += '"';
  out += key;
  out += "\":\"";
  out += std::to_string(value);
  out += '"';
}

void AppendAttributes(std::string& out, const SpanAttributes& attributes) {
  out += '[';
  bool first = true;
  for (const auto& [key, value] : attributes) {
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendMember(out, "key", key);
    out += ",\"value\":{";
    if (const auto* text = std::get_if<std::string>(&value)) {
      AppendMember(out, "stringValue", *text);
    } else if (const auto* number = std::get_if<std::int64_t>(&value)) {
      AppendInt64Member(out, "intValue", *number);
    } else {
      out += std::get<bool>(value) ? "\"boolValue\":true" : "\"boolValue\":false";
    }
    out += "}}";
  }
  out += ']';
}

void AppendSpan(std::string& out, const Span& span) {
  out += '{';
  AppendMember(out, "traceId", span.context.trace_id);
  out += ',';
  AppendMember(out, "spanId", span.context.span_id);
  if (!span.context.parent_id.empty()) {
    out += ',';
    AppendMember(out, "parentSpanId", span.context.parent_id);
  }
  if (!span.context.state.empty()) {
    out += ',';
    AppendMember(out, "traceState", span.context.state);
  }
  out += ',';
  AppendMember(out, "name", span.name);
  out += ",\"kind\":";
  out += std::to_string(static_cast<int>(span.kind));
  out += ',';
  AppendInt64Member(out, "startTimeUnixNano", span.start_unix_nano);
  out += ',';
  AppendInt64Member(out, "endTimeUnixNano", span.end_unix_nano);
  out += ",\"attributes\":";
  AppendAttributes(out, span.attributes);
  if (!span.events.empty()) {
    out += ",\"events\":[";
    bool first = true;
    for (const SpanEvent& event : span.events) {
      if (!first) out += ',';
      first = false;
      out += '{';
      AppendInt64Member(out, "timeUnixNano", event.time_unix_nano);
      out += ',';
      AppendMember(out, "name", event.name);
      if (!event.attributes.empty()) {
        out += ",\"attributes\":";
        AppendAttributes(out, event.attributes);
      }
      out += '}';
    }
    out += ']';
  }
  if (span.status != SpanStatus::kUnset) {
    out += ",\"status\":{\"code\":";
    out += std::to_string(static_cast<int>(span.status));
    if (!span.status_message.empty()) {
      out += ',';
      AppendMember(out, "message", span.status_message);
    }
    out += '}';
  }
  out += '}';
}

}  // namespace

std::string OtlpTraceRequest(const std::vector<Span>& spans, const OtlpResource& resource) {
  SpanAttributes resource_attributes = {{"service.name", resource.service_name}};
  if (!resource.service_version.empty()) {
    resource_attributes.emplace_back("service.version", resource.service_version);
  }
  if (!resource.instance_id.empty()) {
    resource_attributes.emplace_back("service.instance.id", resource.instance_id);
  }
  std::string out;
  out.reserve(256 + spans.size() * 768);
  out += "{\"resourceSpans\":[{\"resource\":{\"attributes\":";
  AppendAttributes(out, resource_attributes);
  out += "},\"scopeSpans\":[{\"scope\":{\"name\":\"settle\"},\"spans\":[";
  bool first = true;
  for (const Span& span : spans) {
    if (!first) out += ',';
    first = false;
    AppendSpan(out, span);
  }
  out += "]}]}]}";
  return out;
}

}  // namespace settle::telemetry
