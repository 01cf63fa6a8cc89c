#include "settle/engine/decision.h"

#include "settle/engine/type_rules.h"

namespace settle::engine {

Decision Decide(const storage::Transaction& tx, TimePoint now) {
  return RulesOf(tx.global.trans_type).decide(tx, now);
}

std::vector<bool> RowsStillCalled(const storage::Transaction& tx) {
  return RulesOf(tx.global.trans_type).rows_still_called(tx);
}

std::vector<bool> PreparedRowsOf(const storage::Transaction& tx, std::optional<BranchOp> op) {
  std::vector<bool> called(tx.branches.size());
  if (!op) return called;
  for (std::size_t i = 0; i < tx.branches.size(); ++i) {
    called[i] = tx.branches[i].op == *op && tx.branches[i].status == BranchStatus::kPrepared;
  }
  return called;
}

void ApplyStatusChange(storage::GlobalRecord& global, GlobalStatus to, const std::string& reason,
                       TimePoint now) {
  global.status = to;
  global.update_time = now;
  if (to == GlobalStatus::kAborting) {
    global.rollback_time = now;
    if (!reason.empty()) global.rollback_reason = reason;
  }
  // A transaction failed without rolling back first (an operator's forceStop) keeps why; one
  // stopped while rolling back keeps both reasons.
  if (to == GlobalStatus::kFailed && !reason.empty()) {
    global.rollback_reason =
        global.rollback_reason.empty() ? reason : global.rollback_reason + "; then " + reason;
  }
  if (IsTerminal(to)) {
    global.finish_time = now;
    global.next_cron_time.reset();
    global.stuck = false;
  }
}

}  // namespace settle::engine
