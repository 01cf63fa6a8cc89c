#pragma once

#include "settle/engine/branch_call.h"
#include "settle/engine/retry_policy.h"
#include "settle/storage/records.h"

namespace settle::engine {

// Records the outcome of one call in its branch row of a transaction of `type` (pure; the
// caller stores the row):
// - SUCCESS: the row is succeed and its failure streak ends.
// - FAILURE from a saga action: the row is failed (the saga will abort); from a message's
//   back-check (op msg) too (the message fails). From a message's delivery it counts as a
//   failure like an unknown result: the receiver is asked again. From confirm, cancel,
//   compensate, commit or rollback it is a participant bug and counts as a failure too.
// - ONGOING: due again after the current interval; the failure streak is unchanged.
// - unknown: one more consecutive failure, due again after the backoff delay.
// attempts counts every recorded call; last_error keeps the newest problem, and every call
// that did not succeed joins failed_attempts (the latest kMaxFailedAttempts).
// A call that was not made (its host's gate held it: not_called_until) changes nothing: the
// row keeps its stored due time, and the gate wakes the transaction.
void RecordOutcome(storage::BranchRecord& row, TransType type, const BranchOutcome& outcome,
                   Duration retry_interval, const RetryPolicy& policy, TimePoint now);

// Whether a branch still to be called has failed the policy's stuck threshold times in a row.
bool HasStuckBranch(const storage::Transaction& tx, const RetryPolicy& policy);

}  // namespace settle::engine
