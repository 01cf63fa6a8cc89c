#include "settle/engine/outcome_recorder.h"

#include "settle/engine/type_rules.h"

namespace settle::engine {
namespace {

std::string Describe(const BranchOutcome& outcome) {
  std::string text(ToString(outcome.result));
  if (!outcome.detail.empty()) {
    text += ": ";
    text += outcome.detail;
  }
  return text;
}

// Keeps the call in the branch's bounded history of calls that did not succeed.
void RememberFailedAttempt(storage::BranchRecord& row, TimePoint now) {
  auto& history = row.failed_attempts;
  if (history.size() >= storage::BranchRecord::kMaxFailedAttempts) {
    history.erase(
        history.begin(),
        history.begin() + static_cast<std::ptrdiff_t>(
                              history.size() - storage::BranchRecord::kMaxFailedAttempts + 1));
  }
  history.push_back(storage::FailedAttempt{now, row.last_error});
}

}  // namespace

// The row's status, failure streak, last error and next retry after the call.
static void RecordResult(storage::BranchRecord& row, TransType type, const BranchOutcome& outcome,
                         Duration retry_interval, const RetryPolicy& policy, TimePoint now) {
  row.attempts += 1;
  row.update_time = now;
  switch (outcome.result) {
    case BranchResult::kSuccess: {
      const auto final_success = RulesOf(type).success_is_final;
      if (final_success != nullptr && !final_success(row.op)) {
        // Asked again after the retry interval, as long as the transaction waits for it.
        row.failures = 0;
        row.last_error = Describe(outcome);
        row.next_retry_at = now + policy.Delay(retry_interval, 0);
        return;
      }
      // The errors of its earlier calls stay in failed_attempts; last_error says what stands.
      row.status = BranchStatus::kSucceed;
      row.failures = 0;
      row.last_error.clear();
      return;
    }
    case BranchResult::kFailure: {
      // What FAILURE means is the type's (type_rules.h): a saga action's and a message's
      // back-check's settle the row; everything else must succeed in the end.
      const FailureMeaning meaning = RulesOf(type).failure_of(row.op);
      if (meaning == FailureMeaning::kFinal) {
        // Counted like any call that did not succeed, so that a failed row never shows
        // "failures 0"; a failed row is not called again, so no backoff follows from it.
        row.status = BranchStatus::kFailed;
        row.failures += 1;
        row.last_error = Describe(outcome);
        return;
      }
      row.failures += 1;
      row.last_error = meaning == FailureMeaning::kRetried
                           ? Describe(outcome)
                           : "participant bug: " + std::string(ToString(row.op)) +
                                 " must not answer " + Describe(outcome);
      row.next_retry_at = now + policy.Delay(retry_interval, row.failures);
      return;
    }
    case BranchResult::kOngoing:
      row.last_error = Describe(outcome);
      row.next_retry_at = now + policy.Delay(retry_interval, row.failures);
      return;
    case BranchResult::kUnknown:
      row.failures += 1;
      row.last_error = Describe(outcome);
      row.next_retry_at = now + policy.Delay(retry_interval, row.failures);
      return;
  }
}

void RecordOutcome(storage::BranchRecord& row, TransType type, const BranchOutcome& outcome,
                   Duration retry_interval, const RetryPolicy& policy, TimePoint now) {
  if (outcome.not_called_until) return;
  RecordResult(row, type, outcome, retry_interval, policy, now);
  if (outcome.result != BranchResult::kSuccess) RememberFailedAttempt(row, now);
}

bool HasStuckBranch(const storage::Transaction& tx, const RetryPolicy& policy) {
  for (const auto& b : tx.branches) {
    if (b.status == BranchStatus::kPrepared && policy.IsStuck(b.failures)) return true;
  }
  return false;
}

}  // namespace settle::engine
