#pragma once

#include <map>
#include <string>

#include "settle/core/trace_context.h"

namespace settle::sdk {

// The W3C trace context (https://www.w3.org/TR/trace-context/) a branch call carries in
// `fields`, its header fields or gRPC metadata, as core's ReadTraceHeaders reads it
// (settle/core/trace_context.h: names in any ASCII case, its one `traceparent`, several
// `tracestate` fields joined by commas in the order they came, empty ones left out). The result
// is BranchRequest::trace and XaRequest::trace: trace_id, span_id (the caller's span: this
// call), flags and state; parent_id empty. Empty when the call has no traceparent, more than
// one, or one ParseTraceparent refuses (as W3C says, it is then ignored, and a tracestate with
// it).
TraceContext ReadCallTrace(const std::multimap<std::string, std::string>& fields);

}  // namespace settle::sdk
