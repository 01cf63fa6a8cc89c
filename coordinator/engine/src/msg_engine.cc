#include "settle/engine/msg_engine.h"

#include <algorithm>

namespace settle::coordinator {
namespace {

void WakeAt(Decision& d, TimePoint at) { d.wake_at = d.wake_at ? std::min(*d.wake_at, at) : at; }

void CallOrWait(const storage::Transaction& tx, std::size_t row, TimePoint now, Decision& d) {
  const TimePoint due = tx.branches[row].next_retry_at;
  if (due <= now) {
    d.calls.push_back(row);
  } else {
    WakeAt(d, due);
  }
}

Decision BackCheck(const storage::Transaction& tx, TimePoint now) {
  const storage::GlobalRecord& g = tx.global;
  Decision d;
  const auto check =
      std::find_if(tx.branches.begin(), tx.branches.end(),
                   [](const storage::BranchRecord& b) { return b.op == BranchOp::kMsg; });
  // Only a prepare stores a message as prepared, and a prepare always has its back-check.
  if (check == tx.branches.end()) return d;
  if (check->status == BranchStatus::kSucceed) {
    d.next_status = GlobalStatus::kSubmitted;
    d.reason = "query_prepared: the local transaction committed";
    return d;
  }
  if (check->status == BranchStatus::kFailed) {
    d.next_status = GlobalStatus::kFailed;
    d.reason = "query_prepared: the local transaction did not commit (" + check->last_error + ")";
    return d;
  }
  const TimePoint deadline = g.create_time + g.options.timeout_to_fail;
  if (now < deadline) {
    WakeAt(d, deadline);
    return d;
  }
  CallOrWait(tx, static_cast<std::size_t>(check - tx.branches.begin()), now, d);
  return d;
}

std::string GaveUpReason(const storage::BranchRecord& row, int retry_limit) {
  return "step " + std::to_string(row.seq) + " (branch " + row.branch_id + ", " + row.url +
         ") not delivered after " + std::to_string(row.failures) +
         " failed attempts (retry_limit " + std::to_string(retry_limit) + "): " + row.last_error;
}

Decision Deliver(const storage::Transaction& tx, TimePoint now) {
  const storage::GlobalRecord& g = tx.global;
  Decision d;
  const int limit = g.options.retry_limit;
  bool all_delivered = true;
  for (const storage::BranchRecord& b : tx.branches) {
    if (b.op != BranchOp::kAction || b.status == BranchStatus::kSucceed) continue;
    all_delivered = false;
    if (limit > 0 && b.failures >= limit) {
      d.next_status = GlobalStatus::kFailed;
      d.reason = GaveUpReason(b, limit);
      return d;
    }
  }
  if (all_delivered) {
    d.next_status = GlobalStatus::kSucceed;
    return d;
  }
  const TimePoint start = g.create_time + g.options.delay;
  if (now < start) {
    d.wake_at = start;
    return d;
  }
  // Rows are in (seq, branch_id) order: step by step, a topic's subscribers one after another.
  for (std::size_t i = 0; i < tx.branches.size(); ++i) {
    const storage::BranchRecord& b = tx.branches[i];
    if (b.op != BranchOp::kAction || b.status == BranchStatus::kSucceed) continue;
    CallOrWait(tx, i, now, d);
    if (!g.options.concurrent) break;
  }
  return d;
}

}  // namespace

Decision DecideMsg(const storage::Transaction& tx, TimePoint now) {
  switch (tx.global.status) {
    case GlobalStatus::kPrepared:
      return BackCheck(tx, now);
    case GlobalStatus::kSubmitted:
      return Deliver(tx, now);
    case GlobalStatus::kAborting:  // a message never rolls back
    case GlobalStatus::kSucceed:
    case GlobalStatus::kFailed:
      return {};
  }
  return {};
}

}  // namespace settle::coordinator
