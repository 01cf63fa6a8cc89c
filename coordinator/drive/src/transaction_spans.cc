#include "settle/drive/transaction_spans.h"

#include <algorithm>
#include <string>

namespace settle::drive {

Span AttemptSpan(const storage::GlobalRecord& global, const storage::BranchRecord& row,
                 const TraceContext& trace, const engine::BranchOutcome& outcome, TimePoint started,
                 TimePoint now) {
  Span span;
  span.context = trace;
  span.name = std::string(ToString(row.op));
  span.kind = SpanKind::kClient;
  span.start_unix_nano = UnixNanos(started);
  span.end_unix_nano = outcome.elapsed.count() > 0
                           ? span.start_unix_nano + outcome.elapsed.count() * 1000
                           : UnixNanos(now);
  span.attributes = {
      {"settle.gid", global.gid},
      {"settle.trans_type", std::string(ToString(global.trans_type))},
      {"settle.branch_id", row.branch_id},
      {"settle.op", std::string(ToString(row.op))},
      {"settle.attempt", std::int64_t{row.attempts}},
      {"settle.outcome", std::string(ToString(outcome.result))},
      {"url.full", row.url},
  };
  if (outcome.grpc_code) {
    span.attributes.emplace_back("rpc.system", std::string("grpc"));
    span.attributes.emplace_back("rpc.grpc.status_code", std::int64_t{*outcome.grpc_code});
  } else if (outcome.http_status > 0) {
    span.attributes.emplace_back("http.response.status_code", std::int64_t{outcome.http_status});
  }
  if (outcome.result != BranchResult::kSuccess) {
    span.status = SpanStatus::kError;
    span.status_message =
        outcome.detail.empty() ? std::string(ToString(outcome.result)) : outcome.detail;
  }
  return span;
}

Span TransactionSpan(const storage::Transaction& tx, TimePoint now) {
  const storage::GlobalRecord& g = tx.global;
  const TimePoint end = g.finish_time.value_or(now);
  Span span;
  span.context = g.trace;
  span.name = std::string(ToString(g.trans_type));
  span.kind = SpanKind::kInternal;
  span.start_unix_nano = UnixNanos(g.create_time);
  span.end_unix_nano = std::max(span.start_unix_nano, UnixNanos(end));
  span.attributes = {
      {"settle.gid", g.gid},
      {"settle.trans_type", std::string(ToString(g.trans_type))},
      {"settle.status", std::string(ToString(g.status))},
      {"settle.branches", static_cast<std::int64_t>(tx.branches.size())},
  };
  if (g.force_stopped) span.attributes.emplace_back("settle.force_stopped", true);
  span.events.push_back(SpanEvent{UnixNanos(g.create_time), "created", {}});
  if (g.rollback_time) {
    span.events.push_back(
        SpanEvent{UnixNanos(*g.rollback_time), "aborting", {{"settle.reason", g.rollback_reason}}});
  }
  SpanEvent final_event{UnixNanos(end), std::string(ToString(g.status)), {}};
  if (g.status == GlobalStatus::kFailed) {
    final_event.attributes.emplace_back("settle.reason", g.rollback_reason);
    span.status = SpanStatus::kError;
    span.status_message = g.rollback_reason.empty() ? "failed" : g.rollback_reason;
  }
  span.events.push_back(std::move(final_event));
  return span;
}

}  // namespace settle::drive
