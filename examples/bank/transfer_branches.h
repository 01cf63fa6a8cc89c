#pragma once

#include <functional>

#include "bank_db.h"
#include "settle/core/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/branch_request.h"
#include "settle/sdk/participant.h"
#include "transfer_request.h"

namespace settle::bank {

// The business code of one branch URL: runs once per branch and op, in the barrier's local
// transaction, on the call's validated body. OK commits; Conflict answers 409 FAILURE; any
// other error rolls back (barrier rows included) and answers 500 or 503, which the
// coordinator retries.
using TransferBusiness =
    std::function<Status(const sdk::BranchRequest&, const TransferRequest&, BankDb&)>;

// The branch handler for `business`: the body is validated first (400 naming the field,
// before the barrier records anything, so a bad call never counts as a Try or a Cancel), then
// `business` runs inside Guarded(barrier, ...).
sdk::BranchHandler GuardedTransfer(sdk::Barrier& barrier, TransferBusiness business);

// TCC, paying side: Try reserves (balance -> frozen, recorded under the branch; 409 when short or
// unknown), Confirm spends that reservation, Cancel releases it: each applies what its Try
// froze, whatever its own body says.
Status TransOutTry(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);
Status TransOutConfirm(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);
Status TransOutCancel(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);

// TCC, receiving side: Try records a pending credit under (gid, branch_id) (409 for an unknown
// account), Confirm adds that pending credit to the balance, Cancel drops it.
Status TransInTry(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);
Status TransInConfirm(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);
Status TransInCancel(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);

// Saga: TransOut debits (409 when short or unknown) and its compensation credits it back;
// TransIn credits (409 for an unknown account) and its compensation debits it back, even into
// overdraft, because a compensation must not fail.
Status TransOut(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);
Status TransOutCompensate(const sdk::BranchRequest& call, const TransferRequest& transfer,
                          BankDb& db);
Status TransIn(const sdk::BranchRequest& call, const TransferRequest& transfer, BankDb& db);
Status TransInCompensate(const sdk::BranchRequest& call, const TransferRequest& transfer,
                         BankDb& db);

}  // namespace settle::bank
