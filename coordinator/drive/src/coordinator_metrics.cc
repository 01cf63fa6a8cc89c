#include "settle/drive/coordinator_metrics.h"

#include <string>

#include "settle/core/ascii.h"
#include "settle/engine/type_rules.h"

namespace settle::drive {
namespace {

// The ops the coordinator itself calls.
constexpr std::array<BranchOp, 8> kCalledOps = {
    BranchOp::kConfirm, BranchOp::kCancel, BranchOp::kAction,   BranchOp::kCompensate,
    BranchOp::kMsg,     BranchOp::kCommit, BranchOp::kRollback, BranchOp::kResume};
constexpr std::array<BranchResult, 4> kAllResults = {
    BranchResult::kSuccess, BranchResult::kFailure, BranchResult::kOngoing, BranchResult::kUnknown};

std::size_t Index(TransType type) { return static_cast<std::size_t>(type); }
std::size_t Index(BranchOp op) { return static_cast<std::size_t>(op); }
std::size_t Index(BranchResult result) { return static_cast<std::size_t>(result); }

std::string Label(auto value) { return std::string(ToString(value)); }

// "success", "failure", "ongoing", "unknown".
std::string Label(BranchResult result) { return AsciiLowercase(ToString(result)); }

}  // namespace

void CoordinatorMetrics::TransactionStarted(TransType type) {
  started_[Index(type)].fetch_add(1, std::memory_order_relaxed);
}

void CoordinatorMetrics::TransactionFinished(TransType type, GlobalStatus status) {
  finished_[Index(type)][status == GlobalStatus::kFailed ? 1 : 0].fetch_add(
      1, std::memory_order_relaxed);
}

void CoordinatorMetrics::TransactionStuck(TransType type) {
  stuck_[Index(type)].fetch_add(1, std::memory_order_relaxed);
}

void CoordinatorMetrics::BranchCalled(BranchOp op, const engine::BranchOutcome& outcome,
                                      bool retry) {
  calls_[Index(op)][Index(outcome.result)].fetch_add(1, std::memory_order_relaxed);
  if (retry) retries_[Index(op)].fetch_add(1, std::memory_order_relaxed);
  call_time_[Index(op)].Record(outcome.elapsed);
}

void CoordinatorMetrics::QuotaRefused(QuotaKind kind) {
  quota_refusals_[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t CoordinatorMetrics::QuotaRefusals(QuotaKind kind) const {
  return quota_refusals_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
}

std::uint64_t CoordinatorMetrics::Finished(TransType type, GlobalStatus status) const {
  return finished_[Index(type)][status == GlobalStatus::kFailed ? 1 : 0].load(
      std::memory_order_relaxed);
}

std::uint64_t CoordinatorMetrics::BranchCalls(BranchOp op, BranchResult result) const {
  return calls_[Index(op)][Index(result)].load(std::memory_order_relaxed);
}

void CoordinatorMetrics::WriteTo(metrics::PrometheusText& out) const {
  out.Family("settle_transactions_started_total", "counter",
             "Global transactions created (TCC prepare, saga submit), by type.");
  for (const engine::TypeRules* rules : engine::AllTypeRules()) {
    const TransType t = rules->type;
    out.Sample("settle_transactions_started_total", {{"type", Label(t)}},
               started_[Index(t)].load(std::memory_order_relaxed));
  }
  out.Family("settle_transactions_finished_total", "counter",
             "Global transactions that reached a final status, by type and status.");
  for (const engine::TypeRules* rules : engine::AllTypeRules()) {
    const TransType t = rules->type;
    for (GlobalStatus s : {GlobalStatus::kSucceed, GlobalStatus::kFailed}) {
      out.Sample("settle_transactions_finished_total", {{"type", Label(t)}, {"status", Label(s)}},
                 Finished(t, s));
    }
  }
  out.Family("settle_transactions_stuck_total", "counter",
             "Times a transaction was flagged stuck: a branch failed --stuck-after times in a "
             "row.");
  for (const engine::TypeRules* rules : engine::AllTypeRules()) {
    const TransType t = rules->type;
    out.Sample("settle_transactions_stuck_total", {{"type", Label(t)}},
               stuck_[Index(t)].load(std::memory_order_relaxed));
  }
  out.Family("settle_branch_calls_total", "counter",
             "Calls of participants' branch URLs, by op and outcome (success, failure, ongoing, "
             "unknown: an error, a timeout or an unexpected answer).");
  for (BranchOp op : kCalledOps) {
    for (BranchResult r : kAllResults) {
      out.Sample("settle_branch_calls_total", {{"op", Label(op)}, {"outcome", Label(r)}},
                 BranchCalls(op, r));
    }
  }
  out.Family("settle_branch_retries_total", "counter",
             "Branch calls that repeated an earlier call of the same branch, by op.");
  for (BranchOp op : kCalledOps) {
    out.Sample("settle_branch_retries_total", {{"op", Label(op)}},
               retries_[Index(op)].load(std::memory_order_relaxed));
  }
  out.Family("settle_branch_call_duration_seconds", "histogram",
             "Duration of branch calls, from sending the request to reading the answer (or "
             "giving up), by op.");
  for (BranchOp op : kCalledOps) {
    out.Histogram("settle_branch_call_duration_seconds", {{"op", Label(op)}},
                  call_time_[Index(op)].Read(), 1e6);
  }
  out.Family("settle_quota_refusals_total", "counter",
             "Requests refused (429) because their caller holds its quota of unfinished "
             "transactions (quota=\"unfinished\", --quota-unfinished) or of their bytes "
             "(quota=\"unfinished_bytes\", --quota-unfinished-bytes).");
  out.Sample("settle_quota_refusals_total", {{"quota", "unfinished"}},
             QuotaRefusals(QuotaKind::kUnfinished));
  out.Sample("settle_quota_refusals_total", {{"quota", "unfinished_bytes"}},
             QuotaRefusals(QuotaKind::kBytes));
}

}  // namespace settle::drive
