#include "settle/sdk/barrier.h"

#include <optional>
#include <utility>

#include "local_transaction_call.h"
#include "settle/core/delete_in_batches.h"
#include "settle/sdk/caught.h"

namespace settle::sdk {
namespace {

// The op whose row a cancel (compensate, a workflow step's rollback) inserts first: that row is
// what tells a late Try (action) that its transaction was already rolled back.
std::optional<BranchOp> OriginOf(BranchOp op) {
  switch (op) {
    case BranchOp::kCancel:
      return BranchOp::kTry;
    case BranchOp::kCompensate:
    case BranchOp::kRollback:
      return BranchOp::kAction;
    default:
      return std::nullopt;
  }
}

BranchReply StoreFailureReply(const Status& status, std::string_view doing) {
  return BranchReply::Error(StoreFailure(status, doing));
}

}  // namespace

std::string_view ToString(BarrierCase c) {
  switch (c) {
    case BarrierCase::kFirstCall:
      return "first_call";
    case BarrierCase::kDuplicate:
      return "duplicate";
    case BarrierCase::kEmptyRollback:
      return "empty_rollback";
    case BarrierCase::kHanging:
      return "hanging";
  }
  return "unknown";
}

Barrier::Barrier(BarrierStore& store, const Clock& clock) : store_(store), clock_(clock) {}

BarrierResult Barrier::Call(const BranchRequest& request, const Business& business,
                            const std::string& barrier_id) {
  // `seen` stays kFirstCall until the barrier rows say otherwise: when the store fails before
  // that, nothing is known and the reply is a 500.
  Result<std::unique_ptr<BarrierTransaction>> begun = store_.Begin();
  if (!begun) return {BarrierCase::kFirstCall, StoreFailureReply(begun.status(), "begin")};
  BarrierTransaction& tx = **begun;  // rolls back on every return that does not commit

  const std::string op(ToString(request.op));
  const TimePoint now = clock_.Now();
  auto row_of = [&](BranchOp row_op) {
    return BarrierRow{std::string(ToString(request.trans_type)),
                      request.gid,
                      request.branch_id,
                      std::string(ToString(row_op)),
                      barrier_id,
                      op,
                      now};
  };

  bool empty_rollback = false;
  if (std::optional<BranchOp> origin = OriginOf(request.op)) {
    Result<bool> inserted = tx.InsertIfAbsent(row_of(*origin));
    if (!inserted) return {BarrierCase::kFirstCall, StoreFailureReply(inserted.status(), "insert")};
    empty_rollback = *inserted;
  }
  // An empty rollback records its own row too, in the same commit: a second delivery of the
  // same cancel then finds it and is a duplicate, instead of running the cancel business
  // for a Try that never reserved anything.
  Result<bool> inserted = tx.InsertIfAbsent(row_of(request.op));
  if (!inserted) return {BarrierCase::kFirstCall, StoreFailureReply(inserted.status(), "insert")};

  if (empty_rollback) {
    Status committed = tx.Commit();
    if (!committed.ok()) {
      return {BarrierCase::kEmptyRollback, StoreFailureReply(committed, "commit")};
    }
    return {BarrierCase::kEmptyRollback, BranchReply::Success()};
  }

  if (!*inserted) {
    // Nothing was written: the transaction is rolled back either way.
    Result<std::optional<std::string>> reason =
        tx.ReasonOf(request.gid, request.branch_id, op, barrier_id);
    tx.Rollback();
    if (!reason) return {BarrierCase::kFirstCall, StoreFailureReply(reason.status(), "read")};
    if (!reason->has_value()) {
      return {BarrierCase::kFirstCall,
              StoreFailureReply(Status::Internal("the barrier row just found is gone"), "read")};
    }
    if (**reason == op) return {BarrierCase::kDuplicate, BranchReply::Success()};
    return {BarrierCase::kHanging,
            BranchReply::Failure(op + " of " + request.gid + "/" + request.branch_id +
                                 " arrived after its " + **reason)};
  }

  Status outcome = Caught("branch business code", [&] { return business(tx); });
  if (!outcome.ok()) {
    // The barrier rows go with the business change, so that a retry runs the business again.
    tx.Rollback();
    return {BarrierCase::kFirstCall, BranchReply::Error(std::move(outcome))};
  }
  Status committed = tx.Commit();
  if (!committed.ok()) return {BarrierCase::kFirstCall, StoreFailureReply(committed, "commit")};
  return {BarrierCase::kFirstCall, BranchReply::Success()};
}

Result<std::size_t> Barrier::Cleanup(Duration retention, std::size_t batch_size) {
  if (batch_size == 0) {
    return Status::InvalidArgument("barrier cleanup: batch_size must be at least 1");
  }
  if (retention < Duration::zero()) {
    return Status::InvalidArgument("barrier cleanup: retention must not be negative");
  }
  const TimePoint cutoff = clock_.Now() - retention;
  BatchedDeletion done =
      DeleteInBatches([&] { return store_.DeleteCreatedBefore(cutoff, batch_size); }, batch_size);
  if (!done.status.ok()) return done.status;
  return done.deleted;
}

}  // namespace settle::sdk
