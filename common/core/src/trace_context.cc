#include "settle/core/trace_context.h"

#include <random>

#include "settle/core/ascii.h"

namespace settle {
namespace {

constexpr std::size_t kMaxTracestate = 512;
constexpr char kHex[] = "0123456789abcdef";

std::string RandomHex(std::size_t digits) {
  // Not a secret: W3C asks for ids random enough not to collide. One generator per thread.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  std::string text(digits, '0');
  do {
    for (std::size_t i = 0; i < digits; i += 16) {
      std::uint64_t bits = generator();
      for (std::size_t j = i; j < digits && j < i + 16; ++j, bits >>= 4) text[j] = kHex[bits & 15];
    }
  } while (!IsTraceHex(text, digits));
  return text;
}

bool PrintableAscii(std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

bool IsTraceHex(std::string_view text, std::size_t digits) {
  if (text.size() != digits) return false;
  bool zero = true;
  for (const char c : text) {
    if (LowerHexDigitValue(c) < 0) return false;
    zero = zero && c == '0';
  }
  return !zero;
}

std::string TraceContext::Traceparent() const {
  std::string text = "00-" + trace_id + "-" + span_id + "-";
  text += kHex[flags >> 4];
  text += kHex[flags & 15];
  return text;
}

std::optional<TraceContext> ParseTraceparent(std::string_view traceparent,
                                             std::string_view tracestate) {
  // version "-" trace-id "-" parent-id "-" trace-flags: 2+1+32+1+16+1+2 = 55 bytes.
  constexpr std::size_t kLength = 55;
  if (traceparent.size() < kLength) return std::nullopt;
  const std::string_view version = traceparent.substr(0, 2);
  if (LowerHexDigitValue(version[0]) < 0 || LowerHexDigitValue(version[1]) < 0 || version == "ff")
    return std::nullopt;
  // Version 00 is exactly 55 bytes; a later one may add fields after a '-'.
  if (version == "00" ? traceparent.size() != kLength
                      : traceparent.size() > kLength && traceparent[kLength] != '-') {
    return std::nullopt;
  }
  if (traceparent[2] != '-' || traceparent[35] != '-' || traceparent[52] != '-') {
    return std::nullopt;
  }
  const std::string_view trace_id = traceparent.substr(3, 32);
  const std::string_view parent_id = traceparent.substr(36, 16);
  const std::string_view flags = traceparent.substr(53, 2);
  if (!IsTraceHex(trace_id, 32) || !IsTraceHex(parent_id, 16) || LowerHexDigitValue(flags[0]) < 0 ||
      LowerHexDigitValue(flags[1]) < 0) {
    return std::nullopt;
  }
  TraceContext context;
  context.trace_id = std::string(trace_id);
  context.span_id = std::string(parent_id);
  context.flags =
      static_cast<std::uint8_t>(LowerHexDigitValue(flags[0]) * 16 + LowerHexDigitValue(flags[1]));
  if (tracestate.size() <= kMaxTracestate && PrintableAscii(tracestate)) {
    context.state = std::string(tracestate);
  }
  return context;
}

std::optional<TraceContext> ReadTraceHeaders(const std::vector<HeaderField>& fields) {
  std::optional<std::string_view> traceparent;
  std::string state;
  for (const auto& [name, value] : fields) {
    if (EqualsIgnoreAsciiCase(name, kTraceparentHeader)) {
      if (traceparent) return std::nullopt;
      traceparent = value;
    } else if (EqualsIgnoreAsciiCase(name, kTracestateHeader) && !value.empty()) {
      if (!state.empty()) state += ',';
      state += value;
    }
  }
  if (!traceparent) return std::nullopt;
  return ParseTraceparent(*traceparent, state);
}

TraceContext StartSpan(const std::optional<TraceContext>& incoming) {
  TraceContext span;
  if (incoming && !incoming->empty()) {
    span.trace_id = incoming->trace_id;
    span.parent_id = incoming->span_id;
    span.flags = incoming->flags;
    span.state = incoming->state;
  } else {
    span.trace_id = NewTraceId();
    span.flags = 1;
  }
  span.span_id = NewSpanId();
  return span;
}

TraceContext ChildSpan(const TraceContext& parent) {
  if (parent.empty()) return {};
  TraceContext child;
  child.trace_id = parent.trace_id;
  child.parent_id = parent.span_id;
  child.flags = parent.flags;
  child.state = parent.state;
  child.span_id = NewSpanId();
  return child;
}

std::string NewTraceId() { return RandomHex(32); }
std::string NewSpanId() { return RandomHex(16); }

}  // namespace settle
