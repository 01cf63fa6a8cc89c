#include "settle/engine/manual_resolution.h"

#include <algorithm>
#include <string>
#include <vector>

#include "settle/engine/decision.h"
#include "settle/engine/type_rules.h"

namespace settle::engine {

std::optional<ResolvedAs> ParseResolvedAs(std::string_view text) {
  if (text == "succeed") return ResolvedAs::kSucceed;
  if (text == "failed") return ResolvedAs::kFailed;
  return std::nullopt;
}

std::string_view ToString(ResolvedAs as) {
  return as == ResolvedAs::kSucceed ? "succeed" : "failed";
}

Status CheckResolution(const storage::Transaction& tx, std::size_t index, ResolvedAs as,
                       TimePoint now) {
  const storage::BranchRecord& row = tx.branches[index];
  const std::string name = "branch " + row.branch_id + " (" + std::string(ToString(row.op)) +
                           ") of gid " + tx.global.gid;
  if (IsTerminal(tx.global.status)) {
    return Status::Conflict("gid " + tx.global.gid + " is " +
                            std::string(ToString(tx.global.status)) + ", already finished");
  }
  if (row.op == BranchOp::kTry || row.op == BranchOp::kMsg) {
    return Status::InvalidArgument("op: a " + std::string(ToString(row.op)) +
                                   " is not a call the coordinator makes to be resolved");
  }
  // No answer settles the call (a workflow's resume): resolving it would settle nothing.
  const TypeRules& rules = RulesOf(tx.global.trans_type);
  if (rules.success_is_final != nullptr && !rules.success_is_final(row.op)) {
    return Status::InvalidArgument("op: a " + std::string(ToString(row.op)) +
                                   " is not resolved by hand: its client's submit ends " +
                                   std::string(rules.article_name) +
                                   " (forceStop ends it by hand)");
  }
  if (row.status != BranchStatus::kPrepared) {
    return Status::Conflict(name + " is " + std::string(ToString(row.status)) +
                            ", not pending: only a pending call can be resolved");
  }
  if (row.attempts == 0) {
    const std::vector<std::size_t> due = Decide(tx, now).calls;
    if (std::find(due.begin(), due.end(), index) == due.end()) {
      return Status::Conflict(name + " is not pending: the transaction has not reached it (" +
                              std::string(ToString(tx.global.status)) +
                              "), and resolving it would skip a call it may still need");
    }
  }
  // Failed only where the participant could have answered so: a saga's action.
  const bool may_fail = rules.failure_of(row.op) == FailureMeaning::kFinal;
  if (as == ResolvedAs::kFailed && !may_fail) {
    return Status::InvalidArgument(
        "outcome: a " + std::string(ToString(row.op)) +
        " can only be resolved as succeed (a failed one is retried by design); only a saga's "
        "action may be resolved as failed, which compensates");
  }
  return Status::Ok();
}

void ApplyResolution(storage::BranchRecord& row, ResolvedAs as, TimePoint now) {
  row.status = as == ResolvedAs::kSucceed ? BranchStatus::kSucceed : BranchStatus::kFailed;
  row.update_time = now;
}

}  // namespace settle::engine
