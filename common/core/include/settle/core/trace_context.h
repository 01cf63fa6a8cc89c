#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace settle {

// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// a request carries (HTTP headers, gRPC metadata), so that a participant's own tracing joins
// the trace of the request that started a transaction.
//
//   traceparent: 00-<trace-id: 32 hex>-<parent-id: 16 hex>-<trace-flags: 2 hex>
//   tracestate:  vendor=value,other=value   (at most 512 bytes, passed on as received)

// The header and metadata names, lower case as gRPC wants them.
inline constexpr std::string_view kTraceparentHeader = "traceparent";
inline constexpr std::string_view kTracestateHeader = "tracestate";

// A span in a trace: the ids that name it and the one it is a child of.
struct TraceContext {
  std::string trace_id;    // 32 lower-case hex digits, not all zero; empty: no trace
  std::string span_id;     // 16 lower-case hex digits, not all zero: this span
  std::string parent_id;   // 16 hex digits: the span it is a child of; empty for a root span
  std::uint8_t flags = 0;  // trace-flags; bit 0 (01) is "sampled"
  std::string state;       // tracestate, as received (empty: none)

  bool empty() const { return trace_id.empty(); }
  // This span as the traceparent of a call it makes: "00-<trace_id>-<span_id>-<flags>".
  std::string Traceparent() const;
  bool operator==(const TraceContext&) const = default;
};

// An incoming traceparent read (its trace id, its span as `span_id`, its flags) with its
// tracestate. nullopt for a traceparent W3C says to ignore (a malformed one, an all-zero id,
// version ff; a later version's is read by its first four fields, as the spec says): the
// trace then starts here. A tracestate that is longer than 512 bytes or holds a byte outside
// printable ASCII is dropped, the traceparent kept.
std::optional<TraceContext> ParseTraceparent(std::string_view traceparent,
                                             std::string_view tracestate = {});

// A header field or gRPC metadata entry: its name and its value.
using HeaderField = std::pair<std::string_view, std::string_view>;

// The caller's span from a request's header fields (or gRPC metadata), in the order sent: its
// `traceparent` and `tracestate` fields, names matched without regard to ASCII case, the rest
// ignored. More than one traceparent is ignored as W3C says (which one would name the caller's
// span?); several tracestate values are one list, joined with ',' (as RFC 9110 combines a
// list's fields), empty ones left out. nullopt: no usable traceparent (none, more than one, or
// one ParseTraceparent refuses; a tracestate is then ignored with it).
std::optional<TraceContext> ReadTraceHeaders(const std::vector<HeaderField>& fields);

// The same over any range of (name, value) pairs of strings: net::Headers, the SDK's
// std::multimap<std::string, std::string>.
template <typename Fields>
std::optional<TraceContext> ReadTraceHeaders(const Fields& fields) {
  std::vector<HeaderField> views;
  for (const auto& [name, value] : fields) views.emplace_back(name, value);
  return ReadTraceHeaders(views);
}

// A new span: a child of `incoming` (same trace, flags and state, `parent_id` its span), or
// the root of a new trace (sampled) without one. A new random span id either way.
TraceContext StartSpan(const std::optional<TraceContext>& incoming);

// A child of `parent` (a branch call of a transaction's span); empty when `parent` is.
TraceContext ChildSpan(const TraceContext& parent);

// Random ids: 32 and 16 lower-case hex digits, never all zero.
std::string NewTraceId();
std::string NewSpanId();

// Whether `text` is `digits` lower-case hex digits, not all zero.
bool IsTraceHex(std::string_view text, std::size_t digits);

}  // namespace settle
