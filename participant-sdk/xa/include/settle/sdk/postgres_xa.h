#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/branch_request.h"
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/xa_request.h"

namespace settle::sdk {

struct PostgresXaOptions {
  std::size_t max_idle_connections = 16;
};

// The business code of an XA branch: its SQL on `db`, inside the branch's local transaction
// (do not COMMIT or ROLLBACK it). OK lets the transaction be prepared; an error rolls it back
// and is the branch's answer (Conflict: 409 FAILURE, the initiator aborts; see BranchReply).
using XaBusiness = std::function<Status(const XaRequest& request, db::PgConnection& db)>;

// An XA participant on PostgreSQL: each branch is a local transaction that the action prepares
// (PREPARE TRANSACTION) and phase 2 commits or rolls back (COMMIT / ROLLBACK PREPARED). The
// server needs max_prepared_transactions above 0.
//
// The action, in this order:
//   1. BEGIN; a row ("xa", gid, branch_id, "action", "01") in the `barrier` table (Open creates
//      it, as PostgresBarrierStore does): the mark that the branch committed, and the lock
//      that makes a second call of the same branch wait until this one is committed or rolled
//      back (after a commit, the second call runs nothing and answers 409 FAILURE);
//   2. the business code;
//   3. PREPARE TRANSACTION '<PreparedTransactionName>';
//   4. POST registerBranch {gid, branch_id, trans_type "xa", url: phase2_url, data ""} to the
//      coordinator given to Open (not to one named by the request), with the action's trace
//      context (XaRequest::trace, the initiator's) as its traceparent and tracestate.
// Prepared before registered (DTM's SDKs register first): a branch the coordinator knows about
// is always prepared (or was, and has been committed or rolled back since), so a commit never
// meets a branch that was registered and then failed to prepare. The coordinator accepts a
// registration only while the global is prepared, so a branch prepared after its global was
// aborted is refused. When registration fails the prepared transaction is rolled back at once
// and the branch answers an error: a refusal (409, 400, 401, 403: the global is no longer
// prepared, unknown, or not XA) is 409 FAILURE; no verdict (no answer, 5xx) is 503. Rolling
// back is safe even when a registration whose answer was lost was stored after all: an
// initiator submits only after every branch answered SUCCESS, so this global is aborted and
// the coordinator's rollback finds nothing to do. What no code here can clean up: the
// participant dying between PREPARE and the end of registration. Such a transaction shows in
// pg_prepared_xacts under its name and holds its locks until an operator runs ROLLBACK
// PREPARED (after checking with the coordinator's /query that its global is not submitted).
//
// Phase 2 is idempotent: COMMIT PREPARED of a name that is no longer prepared is SUCCESS when
// the branch's barrier row exists (it is visible only once the prepared transaction committed),
// and an error the coordinator retries (500, a stuck transaction) when it does not: the branch
// was rolled back or never prepared, and its changes are not in the database. ROLLBACK
// PREPARED of a name that is not prepared is SUCCESS (already rolled back, or never prepared),
// unless the barrier row shows it committed (500). Keep barrier rows (Barrier::Cleanup,
// BarrierCleaner) longer than a commit can still be delivered.
//
// Thread-safe: each call borrows its own connection.
class PostgresXa {
 public:
  // `conninfo`: a postgresql:// URL or libpq's key=value form. `coordinator` (for
  // registerBranch) and `clock` (the barrier row's create_time) must outlive this object.
  static Result<std::unique_ptr<PostgresXa>> Open(const std::string& conninfo,
                                                  CoordinatorLink& coordinator, const Clock& clock,
                                                  PostgresXaOptions options = {});
  ~PostgresXa();

  // The action: the steps above. SUCCESS once prepared and registered.
  BranchReply LocalTransaction(const XaRequest& request, const XaBusiness& business);
  // Steps 1 to 3 alone, for a branch whose caller records it itself (a workflow's XA step,
  // settle/sdk/xa_step.h): OK once prepared, or when it is prepared already (an earlier call
  // prepared it and its caller stopped before it recorded that). The business code's error as
  // it returned it (Conflict: the branch is refused, nothing prepared); another error when the
  // database failed.
  Status PrepareStep(const XaRequest& request, const XaBusiness& business);
  // op=commit or op=rollback.
  BranchReply Phase2(const XaRequest& request);
  // A handler for Participant::OnXa: the action runs `business`, commit and rollback Phase2.
  //   participant.OnXa("/api/TransOutXa", xa->Handler(business));
  XaHandler Handler(XaBusiness business);

  // The name of the branch's prepared transaction: "settle-xa/<gid>/<branch_id>" ('/' cannot
  // occur in either, so no two branches share a name). PostgreSQL allows 199 bytes:
  // InvalidArgument naming the gid when gid and branch_id are longer together than 186.
  static Result<std::string> PreparedTransactionName(const std::string& gid,
                                                     const std::string& branch_id);

  class Impl;

 private:
  explicit PostgresXa(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::sdk
