#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/barrier_store.h"
#include "settle/sdk/branch_request.h"

namespace settle::sdk {

// What the barrier found for a guarded call.
enum class BarrierCase {
  kFirstCall,      // the business code ran (and committed, unless it returned an error)
  kDuplicate,      // this op already ran for this branch: skipped, SUCCESS
  kEmptyRollback,  // cancel/compensate for a Try/action that never ran: skipped, SUCCESS
  kHanging,        // Try/action after its cancel/compensate: skipped, FAILURE (409)
};

std::string_view ToString(BarrierCase c);

struct BarrierResult {
  BarrierCase seen = BarrierCase::kFirstCall;
  BranchReply reply;
};

// Makes a participant's handlers safe against duplicate deliveries, empty rollbacks and
// hanging Try calls, exactly as docs/protocol.md §6.3 says, inside the participant's own local
// transaction:
// - cancel (compensate, or a workflow step's rollback): first insert-if-absent the try
//   (action) row with reason = the current op; if that inserted, the Try never ran: empty
//   rollback, commit, SUCCESS.
// - then insert-if-absent the row of the current op; if it already existed, skip the
//   business code: SUCCESS for a duplicate (stored reason is the op itself), FAILURE for a
//   hanging Try/action (stored reason is cancel/compensate/rollback).
// - otherwise run the business code in the same transaction: commit on OK, roll everything
//   back (barrier rows included, so that a retry runs it again) on an error.
// The business code's Status becomes the reply as BranchReply says: OK -> SUCCESS, Conflict
// (NotFound, AlreadyExists) -> FAILURE (409), Pending -> ONGOING (425), anything else an error
// the coordinator retries. Lifetime: `store` and `clock` must outlive it. Thread-safe.
class Barrier {
 public:
  Barrier(BarrierStore& store, const Clock& clock);

  using Business = std::function<Status(BarrierTransaction& tx)>;

  // Guards one call. `barrier_id` numbers the guarded sections of one handler: "01" for the
  // first.
  BarrierResult Call(const BranchRequest& request, const Business& business,
                     const std::string& barrier_id = "01");

  // Deletes barrier rows older than `retention`, `batch_size` rows per transaction, until none
  // is left; returns how many. Run it periodically: a branch's barrier rows are needed only
  // while its transaction can still deliver calls (retention well beyond timeout_to_fail and
  // the longest retry).
  Result<std::size_t> Cleanup(Duration retention, std::size_t batch_size = 1000);

  // The database and the clock it was made with; a transactional message's barrier row lives
  // there too (settle/sdk/msg_barrier.h).
  BarrierStore& store() const { return store_; }
  const Clock& clock() const { return clock_; }

 private:
  BarrierStore& store_;
  const Clock& clock_;
};

}  // namespace settle::sdk
