#pragma once

#include <functional>
#include <string>

#include "settle/core/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/branch_request.h"

namespace settle::sdk {

// A transactional message's local transaction and the coordinator's back-check (its
// query_prepared call), decided by one barrier row in the participant's own database, as DTM
// does it: key (gid, branch_id "00", op "msg", barrier_id "01"), trans_type "msg". Whoever
// inserts the row first decides:
// - the local transaction inserts it with reason "msg" before it runs the caller's code, and
//   it commits or rolls back with that code's writes;
// - the back-check inserts it, unless present, with reason "rollback", commits, and reads it:
//   "rollback" means the local transaction has not committed and now never will (its own
//   insert finds the row and it does not run), "msg" that it committed.
// A back-check arriving while a local transaction holds the row waits for it to end (the
// barrier table's primary key), so the answer is never a guess. Thread-safe, like Barrier.

// The caller's work, in the same local transaction as the row: its SQL runs on the
// transaction's connection (SqliteBarrierStore::Connection, PostgresBarrierStore::Connection).
using MsgLocalTransaction = std::function<Status(BarrierTransaction& tx)>;

// Runs `local_tx` and inserts the message's row (reason "msg") in one local transaction on
// `barrier`'s database: both commit when it returns OK, both roll back when it returns an
// error or throws (Internal). Returns:
// - OK: committed;
// - `local_tx`'s own error: rolled back;
// - Conflict when the back-check already answered FAILURE for `gid` (`local_tx` did not run);
// - AlreadyExists when a local transaction of `gid` committed before (`local_tx` did not run);
// - Unavailable or Internal when the database failed ("barrier: ..."): the outcome is for the
//   back-check to say (a failed COMMIT may have committed);
// - InvalidArgument for an invalid gid.
Status RunMsgLocalTransaction(Barrier& barrier, const std::string& gid,
                              const MsgLocalTransaction& local_tx);

// The back-check's answer for message `gid`: Success (SUCCESS, 200) when its local
// transaction committed; Failure (FAILURE, 409) when it did not, after which it never can;
// an Unavailable or Internal error (retried by the coordinator) when the database failed.
// The same answer every time it is asked. An invalid gid is a Failure naming it: no message
// with it can have been prepared. Participant::OnQueryPrepared serves it over HTTP.
BranchReply QueryPrepared(Barrier& barrier, const std::string& gid);

}  // namespace settle::sdk
