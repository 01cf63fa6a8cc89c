#include "settle/sdk/msg_barrier.h"

#include <optional>

#include "local_transaction_call.h"
#include "settle/core/protocol.h"
#include "settle/sdk/caught.h"
#include "settle/sdk/check_gid.h"

namespace settle::sdk {
namespace {

// DTM's names for the row (dtmimp.MsgDoBranch0, MsgDoOp, MsgDoBarrier1, OpRollback).
constexpr const char* kMsgTransType = "msg";
constexpr const char* kMsgBranchId = "00";
constexpr const char* kMsgOp = "msg";
constexpr const char* kMsgBarrierId = "01";
constexpr const char* kCommittedReason = "msg";
constexpr const char* kRollbackReason = "rollback";

BarrierRow MsgRow(const std::string& gid, const char* reason, TimePoint now) {
  return BarrierRow{kMsgTransType, gid, kMsgBranchId, kMsgOp, kMsgBarrierId, reason, now};
}

Result<std::string> ReasonOfRow(BarrierTransaction& tx, const std::string& gid) {
  Result<std::optional<std::string>> reason = tx.ReasonOf(gid, kMsgBranchId, kMsgOp, kMsgBarrierId);
  if (!reason) return StoreFailure(reason.status(), "read");
  if (!reason->has_value()) {
    return StoreFailure(Status::Internal("the message's row just found is gone"), "read");
  }
  return **reason;
}

}  // namespace

Status RunMsgLocalTransaction(Barrier& barrier, const std::string& gid,
                              const MsgLocalTransaction& local_tx) {
  if (Status s = CheckGid(gid); !s.ok()) return s;
  Result<std::unique_ptr<BarrierTransaction>> begun = barrier.store().Begin();
  if (!begun) return StoreFailure(begun.status(), "begin");
  BarrierTransaction& tx = **begun;  // rolls back on every return that does not commit

  // The row first, as DTM does: a back-check arriving from now on waits for this transaction,
  // and one that came before has left its "rollback" row here.
  Result<bool> inserted = tx.InsertIfAbsent(MsgRow(gid, kCommittedReason, barrier.clock().Now()));
  if (!inserted) return StoreFailure(inserted.status(), "insert");
  if (!*inserted) {
    Result<std::string> reason = ReasonOfRow(tx, gid);
    tx.Rollback();
    if (!reason) return reason.status();
    if (*reason == kRollbackReason) {
      return Status::Conflict("message " + gid +
                              ": the coordinator's back-check found no committed local "
                              "transaction and failed the message; this one did not run");
    }
    return Status::AlreadyExists("message " + gid +
                                 ": a local transaction of it committed already; this one did "
                                 "not run");
  }

  Status outcome = Caught("the message's local transaction", [&] { return local_tx(tx); });
  if (!outcome.ok()) {
    tx.Rollback();
    return outcome;
  }
  if (Status committed = tx.Commit(); !committed.ok()) return StoreFailure(committed, "commit");
  return Status::Ok();
}

BranchReply QueryPrepared(Barrier& barrier, const std::string& gid) {
  if (Status s = CheckGid(gid); !s.ok()) return BranchReply::Failure(s.message());
  Result<std::unique_ptr<BarrierTransaction>> begun = barrier.store().Begin();
  if (!begun) return BranchReply::Error(StoreFailure(begun.status(), "begin"));
  BarrierTransaction& tx = **begun;

  // Waits for a local transaction that holds the row; takes the row when there is none.
  Result<bool> inserted = tx.InsertIfAbsent(MsgRow(gid, kRollbackReason, barrier.clock().Now()));
  if (!inserted) return BranchReply::Error(StoreFailure(inserted.status(), "insert"));
  Result<std::string> reason = ReasonOfRow(tx, gid);
  if (!reason) return BranchReply::Error(reason.status());
  // FAILURE only once the "rollback" row is durable: until then a local transaction could
  // still take the row and commit.
  if (Status committed = tx.Commit(); !committed.ok()) {
    return BranchReply::Error(StoreFailure(committed, "commit"));
  }
  if (*reason == kCommittedReason) return BranchReply::Success();
  if (*reason == kRollbackReason) {
    return BranchReply::Failure("message " + gid + ": its local transaction did not commit");
  }
  return BranchReply::Error(StoreFailure(
      Status::Internal("unexpected reason '" + *reason + "' in the message's row"), "read"));
}

}  // namespace settle::sdk
