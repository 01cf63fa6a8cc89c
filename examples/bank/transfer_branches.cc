#include "transfer_branches.h"

#include <utility>

#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::bank {

sdk::BranchHandler GuardedTransfer(sdk::Barrier& barrier, TransferBusiness business) {
  sdk::BranchHandler guarded =
      sdk::Guarded(barrier,
                   [business = std::move(business)](const sdk::BranchRequest& call,
                                                    sdk::BarrierTransaction& tx) -> Status {
                     // Parsing again is cheaper than threading the checked body through the
                     // barrier.
                     Result<TransferRequest> transfer = ParseTransferRequest(call.body);
                     if (!transfer) return transfer.status();
                     BankDb db(sdk::SqliteBarrierStore::Connection(tx));
                     return business(call, *transfer, db);
                   });
  return [guarded = std::move(guarded)](const sdk::BranchRequest& call) {
    Result<TransferRequest> transfer = ParseTransferRequest(call.body);
    if (!transfer) return sdk::BranchReply::Error(transfer.status());
    return guarded(call);
  };
}

namespace {

// What a Confirm's own Try held: the barrier runs a Confirm once, after a successful Try, so a
// missing record is a bug (or a Try from before holds were recorded: see the README's upgrade
// note), never a reason to apply the body.
Result<BranchHold> OwnHold(Result<std::optional<BranchHold>> taken, const char* what,
                           const sdk::BranchRequest& call) {
  if (!taken) return taken.status();
  if (!*taken) {
    return Status::Internal(std::string("no ") + what + " for gid " + call.gid + " branch " +
                            call.branch_id);
  }
  return std::move(**taken);
}

}  // namespace

Status TransOutTry(const sdk::BranchRequest& call, const TransferRequest& t, BankDb& db) {
  return db.Freeze(call.gid, call.branch_id, t.account_id, t.amount);
}

Status TransOutConfirm(const sdk::BranchRequest& call, const TransferRequest&, BankDb& db) {
  // What the Try froze, not the body: a Confirm's body is the registration's, which need not be
  // what the Try was sent (an unsigned Try, a workflow's own calls).
  Result<BranchHold> frozen = OwnHold(db.TakeFreeze(call.gid, call.branch_id), "freeze", call);
  if (!frozen) return frozen.status();
  return db.SpendFrozen(frozen->account_id, frozen->amount);
}

Status TransOutCancel(const sdk::BranchRequest& call, const TransferRequest&, BankDb& db) {
  Result<std::optional<BranchHold>> frozen = db.TakeFreeze(call.gid, call.branch_id);
  if (!frozen) return frozen.status();
  if (!*frozen) return Status::Ok();  // the Try froze nothing
  return db.Unfreeze((*frozen)->account_id, (*frozen)->amount);
}

Status TransInTry(const sdk::BranchRequest& call, const TransferRequest& t, BankDb& db) {
  return db.AddPendingCredit(call.gid, call.branch_id, t.account_id, t.amount);
}

Status TransInConfirm(const sdk::BranchRequest& call, const TransferRequest&, BankDb& db) {
  // The pending record, not the body, is what the Try promised.
  Result<BranchHold> credit =
      OwnHold(db.TakePendingCredit(call.gid, call.branch_id), "pending credit", call);
  if (!credit) return credit.status();
  // Already counted against the limit when the Try recorded it.
  return db.Credit(credit->account_id, credit->amount, /*check_limit=*/false);
}

Status TransInCancel(const sdk::BranchRequest& call, const TransferRequest&, BankDb& db) {
  Result<std::optional<BranchHold>> credit = db.TakePendingCredit(call.gid, call.branch_id);
  return credit ? Status::Ok() : credit.status();
}

Status TransOut(const sdk::BranchRequest&, const TransferRequest& t, BankDb& db) {
  return db.Debit(t.account_id, t.amount);
}

Status TransOutCompensate(const sdk::BranchRequest&, const TransferRequest& t, BankDb& db) {
  return db.Credit(t.account_id, t.amount, /*check_limit=*/false);  // money coming back
}

Status TransIn(const sdk::BranchRequest&, const TransferRequest& t, BankDb& db) {
  return db.Credit(t.account_id, t.amount, /*check_limit=*/true);
}

Status TransInCompensate(const sdk::BranchRequest&, const TransferRequest& t, BankDb& db) {
  return db.Debit(t.account_id, t.amount, /*allow_overdraft=*/true);
}

}  // namespace settle::bank
