#include "settle/engine/decision.h"

#include "settle/engine/msg_engine.h"
#include "settle/engine/saga_engine.h"
#include "settle/engine/two_phase_engine.h"

namespace settle::engine {

Decision Decide(const storage::Transaction& tx, TimePoint now) {
  switch (tx.global.trans_type) {
    case TransType::kTcc:
      return DecideTcc(tx, now);
    case TransType::kSaga:
      return DecideSaga(tx, now);
    case TransType::kMsg:
      return DecideMsg(tx, now);
    case TransType::kXa:
      return DecideXa(tx, now);
  }
  return {};
}

namespace {

// The op a status drives for the transaction's type; nullopt when it drives none. A failed
// TCC or XA that no operator stopped still drives its rollbacks (two_phase_engine.h).
std::optional<BranchOp> DrivenOp(const storage::GlobalRecord& g) {
  const TransType type = g.trans_type;
  const GlobalStatus status = g.status;
  const bool submitted = status == GlobalStatus::kSubmitted;
  const bool aborting =
      status == GlobalStatus::kAborting || (status == GlobalStatus::kFailed && !g.force_stopped);
  switch (type) {
    case TransType::kTcc:
      if (submitted) return BranchOp::kConfirm;
      if (aborting) return BranchOp::kCancel;
      return std::nullopt;
    case TransType::kXa:
      if (submitted) return BranchOp::kCommit;
      if (aborting) return BranchOp::kRollback;
      return std::nullopt;
    case TransType::kMsg:
      if (status == GlobalStatus::kPrepared) return BranchOp::kMsg;  // the back-check
      if (submitted) return BranchOp::kAction;
      return std::nullopt;
    case TransType::kSaga:
      return std::nullopt;  // decided step by step: SagaRowsStillCalled
  }
  return std::nullopt;
}

}  // namespace

std::vector<bool> RowsStillCalled(const storage::Transaction& tx) {
  if (tx.global.trans_type == TransType::kSaga) return SagaRowsStillCalled(tx);
  std::vector<bool> called(tx.branches.size());
  const std::optional<BranchOp> op = DrivenOp(tx.global);
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
