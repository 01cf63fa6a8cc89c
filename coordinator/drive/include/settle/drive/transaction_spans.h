#pragma once

#include "settle/core/clock.h"
#include "settle/core/span.h"
#include "settle/engine/branch_call.h"
#include "settle/storage/records.h"

namespace settle::drive {

// The OpenTelemetry spans settled reports about a transaction (docs/operations.md, "Tracing
// with OpenTelemetry"), all in the transaction's trace (GlobalRecord::trace) and only when
// its caller sampled it (IsSampled):
//
// - one span for the transaction, named by its type ("saga", "tcc", "msg", "xa"): from its
//   create_time to its final state, its stored span id (the one its branch calls are children
//   of), a child of its caller's span; events "created", "aborting" (with the reason) and its
//   final status; an error when it failed. Reported once, by whoever stores its final state.
// - one span per branch call made (an attempt; a call its host's gate held is none), named
//   by the op ("action", "compensate", "confirm", "cancel", ...): the call's own span id (sent
//   as its traceparent), a child of the transaction's; an error unless the participant
//   answered SUCCESS.
//
// Attributes: settle.gid, settle.trans_type; a call's settle.branch_id, settle.op,
// settle.attempt (1 for the first), settle.outcome, url.full (as registered) and
// http.response.status_code or rpc.grpc.status_code when an answer came.

// The span of one branch call: `row` as recorded after it (its attempts count it), `trace` the
// call's span, `started` when the round of calls began.
Span AttemptSpan(const storage::GlobalRecord& global, const storage::BranchRecord& row,
                 const TraceContext& trace, const engine::BranchOutcome& outcome, TimePoint started,
                 TimePoint now);

// The span of a transaction that has reached its final state at `now` (its finish_time when
// stored).
Span TransactionSpan(const storage::Transaction& tx, TimePoint now);

// Unix nanoseconds of a time point.
inline std::int64_t UnixNanos(TimePoint t) { return ToUnixMillis(t) * 1'000'000; }

}  // namespace settle::drive
