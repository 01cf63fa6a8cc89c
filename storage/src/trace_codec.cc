#include "trace_codec.h"

#include <optional>

namespace settle::storage {

TraceColumns EncodeTrace(const TraceContext& span) {
  if (span.empty()) return {};
  TraceColumns columns{span.Traceparent(), span.parent_id, span.state};
  const TraceContext read = DecodeTrace(columns.trace, columns.parent, columns.state);
  if (read.empty()) return {};
  columns.state = read.state;
  return columns;
}

TraceContext DecodeTrace(std::string_view trace, std::string_view parent, std::string_view state) {
  if (trace.empty()) return {};
  // ParseTraceparent reads a traceparent's span into span_id: here, the transaction's own.
  std::optional<TraceContext> span = ParseTraceparent(trace, state);
  if (!span || !(parent.empty() || IsTraceHex(parent, 16))) return {};
  span->parent_id = std::string(parent);
  return *std::move(span);
}

}  // namespace settle::storage
