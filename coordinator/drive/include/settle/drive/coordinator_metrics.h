#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "settle/core/protocol.h"
#include "settle/drive/quota_ledger.h"
#include "settle/engine/branch_call.h"
#include "settle/metrics/latency_histogram.h"
#include "settle/metrics/prometheus_text.h"

namespace settle::drive {

// What the coordinator counts as it works: transactions started, finished and flagged stuck,
// and every branch call with its outcome and duration. Counters start at zero with the
// process, as Prometheus expects of counters (rate() handles the restart).
//
// Thread-safety: everything from any thread; each count is one relaxed atomic add.
class CoordinatorMetrics {
 public:
  void TransactionStarted(TransType type);
  // The transaction reached succeed or failed.
  void TransactionFinished(TransType type, GlobalStatus status);
  void TransactionStuck(TransType type);
  // `retry`: the branch had been called before.
  void BranchCalled(BranchOp op, const engine::BranchOutcome& outcome, bool retry);
  // A request refused by a caller's quota (quota_ledger.h).
  void QuotaRefused(QuotaKind kind);

  // settle_transactions_started_total, settle_transactions_finished_total,
  // settle_transactions_stuck_total, settle_branch_calls_total, settle_branch_retries_total
  // settle_branch_call_duration_seconds and settle_quota_refusals_total.
  void WriteTo(metrics::PrometheusText& out) const;

  std::uint64_t Finished(TransType type, GlobalStatus status) const;
  std::uint64_t BranchCalls(BranchOp op, BranchResult result) const;
  std::uint64_t QuotaRefusals(QuotaKind kind) const;

 private:
  static constexpr std::size_t kTypes = kTransTypeCount;  // indexed by a TransType's value
  static constexpr std::size_t kOps = kBranchOpCount;     // every BranchOp, indexed by its value
  static constexpr std::size_t kResults = 4;
  using Counter = std::atomic<std::uint64_t>;

  std::array<Counter, kTypes> started_{};
  std::array<std::array<Counter, 2>, kTypes> finished_{};  // [type][failed?]
  std::array<Counter, kTypes> stuck_{};
  std::array<std::array<Counter, kResults>, kOps> calls_{};
  std::array<Counter, kOps> retries_{};
  std::array<metrics::LatencyHistogram, kOps> call_time_;
  std::array<Counter, 2> quota_refusals_{};  // by QuotaKind
};

}  // namespace settle::drive
