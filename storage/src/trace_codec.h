#pragma once

#include <string>
#include <string_view>

#include "settle/core/trace_context.h"

namespace settle::storage {

// A transaction's span (GlobalRecord::trace) as trans_global's three text columns (SQLite
// schema version 12, PostgreSQL 12):
//   trace         the span as its traceparent, "00-<trace_id>-<span_id>-<flags>"
//   trace_parent  the span it is a child of (parent_id; '' for a root span)
//   trace_state   the tracestate, as received
// All three are '' for no span (every transaction stored before version 12).
struct TraceColumns {
  std::string trace;
  std::string parent;
  std::string state;
};

// Never fails, and stores only what DecodeTrace reads back: an empty span (no trace id), or
// one whose ids are not valid W3C ones, encodes as three ''; a tracestate W3C would drop
// (below) as ''. The columns are then printable ASCII, which both stores' text holds.
TraceColumns EncodeTrace(const TraceContext& span);

// The span the columns hold. Never fails: a span is there to follow a transaction, not to
// refuse one, so a `trace` that is '' or not a valid traceparent, or a `parent` that is
// neither '' nor 16 hex digits, reads as an empty TraceContext; a `state` that W3C would drop
// (longer than 512 bytes, a byte outside printable ASCII) reads as '' with the span kept.
TraceContext DecodeTrace(std::string_view trace, std::string_view parent, std::string_view state);

}  // namespace settle::storage
