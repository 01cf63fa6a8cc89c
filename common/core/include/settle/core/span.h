#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "settle/core/trace_context.h"

namespace settle {

// A finished span as OpenTelemetry's trace model has it (https://opentelemetry.io/docs/specs/
// otel/trace/api/): what a tracing backend draws as one bar of a trace. Plain data; an exporter
// (common/telemetry) encodes it for the wire.

// An attribute's value: a string, an integer or a flag.
using SpanValue = std::variant<std::string, std::int64_t, bool>;
using SpanAttributes = std::vector<std::pair<std::string, SpanValue>>;

// Something that happened at one moment of a span: a transaction's status change, say.
struct SpanEvent {
  std::int64_t time_unix_nano = 0;
  std::string name;
  SpanAttributes attributes;
};

enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3 };  // OTLP's numbers
enum class SpanStatus { kUnset = 0, kOk = 1, kError = 2 };        // OTLP's numbers

struct Span {
  TraceContext context;  // trace_id, span_id, parent_id (empty: a root), flags, state
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  SpanAttributes attributes;
  std::vector<SpanEvent> events;
  SpanStatus status = SpanStatus::kUnset;
  std::string status_message;  // with kError: why
};

// Where finished spans go. Export must not block on I/O (it is called in the middle of a
// transaction's pass): an exporter queues, and drops what does not fit.
// Thread-safety: from many threads at once.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void Export(Span span) = 0;
};

// Whether spans of `trace` are recorded: it names a trace and its caller sampled it (flag 01;
// a trace settled starts itself is sampled).
inline bool IsSampled(const TraceContext& trace) {
  return !trace.empty() && !trace.span_id.empty() && (trace.flags & 0x01) != 0;
}

}  // namespace settle
