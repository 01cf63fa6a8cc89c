#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/storage/records.h"

namespace settle::engine {

// What the engine says to do with a transaction now. Pure data: computing it does no I/O.
struct Decision {
  // A status change to make (and store) before anything else; the caller applies it and
  // asks again.
  std::optional<GlobalStatus> next_status;
  std::string reason;  // why, for a move to aborting: becomes rollback_reason
  // The status change needs an operator, not a business outcome: an alert and an error in the
  // log (a message that gave up delivering, retry_limit). A saga rolled back or a TCC aborted
  // does not.
  bool needs_operator = false;

  // Branch rows (indexes into Transaction::branches) to call now.
  std::vector<std::size_t> calls;
  // Rows whose success let these calls start (a saga action's prerequisite steps' actions):
  // the calls must not go out before those successes are stored. What may have started is
  // known from storage only, so an action sent before the success that let it start was
  // stored could, after a crash and an abort, stay done and never be compensated
  // (saga_engine.h). Found by the deterministic simulation (tests/simulation).
  std::vector<std::size_t> stored_before_calls;

  // With no call to make now: the earliest time one becomes due (a retry, a timeout).
  // Absent when nothing will ever be due without outside input (finished, or waiting for the
  // client).
  std::optional<TimePoint> wake_at;
};

// The engine of the transaction's type (TCC, saga, message, XA). A branch row that has never been
// called is due at once; one that failed is due at its next_retry_at.
Decision Decide(const storage::Transaction& tx, TimePoint now);

// For each row of `tx` (indexes as in Transaction::branches): whether the coordinator will
// still call it in the transaction's current status, now or at its next_retry_at. False for
// every row of a finished transaction (but the rollbacks a failed TCC or XA still has to make:
// two_phase_engine.h), for rows that are no longer prepared, for the ops the
// status does not drive (a TCC's cancel rows while it is submitted, any row of a prepared TCC
// or XA: the client decides), and for a saga's compensations of steps that never started.
std::vector<bool> RowsStillCalled(const storage::Transaction& tx);

// For each row of `tx`: whether it is a prepared row of `op` (none without one). What
// RowsStillCalled is for a type whose status drives one op at a time (TCC, XA, message).
std::vector<bool> PreparedRowsOf(const storage::Transaction& tx, std::optional<BranchOp> op);

// Applies a decided status change to the record: status, update_time, and the fields the
// change implies (rollback_time and rollback_reason on aborting; the reason too when failing,
// after "; then " when there is a rollback reason already; finish_time, no next_cron_time and
// no stuck flag once finished).
void ApplyStatusChange(storage::GlobalRecord& global, GlobalStatus to, const std::string& reason,
                       TimePoint now);

}  // namespace settle::engine
