#include "settle/sdk/postgres_xa.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "settle/db/pg_pool.h"
#include "settle/sdk/caught.h"
#include "settle/sdk/postgres_barrier_schema.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kNamePrefix = "settle-xa/";
// PostgreSQL's limit on a prepared transaction's name (GIDSIZE 200, with its terminating NUL).
constexpr std::size_t kMaxNameBytes = 199;

// The branch's row in the barrier table, DTM's choice for XA: op "action", barrier id "01".
constexpr std::string_view kMarkOp = "action";
constexpr std::string_view kMarkBarrierId = "01";

constexpr std::string_view kIsPreparedSql = "SELECT 1 FROM pg_prepared_xacts WHERE gid = $1::text";

// A string literal of SQL. The names built here hold only [A-Za-z0-9_.:/-], but the quoting
// does not rely on that.
std::string QuoteLiteral(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += '\'';
    quoted += c;
  }
  return quoted + "'";
}

std::string BranchName(const XaRequest& request) {
  return "xa branch " + request.gid + "/" + request.branch_id;
}

}  // namespace

class PostgresXa::Impl {
 public:
  Impl(const std::string& conninfo, CoordinatorLink& coordinator, const Clock& clock,
       const PostgresXaOptions& options)
      : pool_(conninfo, options.max_idle_connections), coordinator_(coordinator), clock_(clock) {}

  db::PgPool& pool() { return pool_; }

  BranchReply LocalTransaction(const XaRequest& request, const XaBusiness& business) {
    if (request.op != XaOp::kAction) {
      return BranchReply::Failure("op: the local transaction runs for op=action, not " +
                                  std::string(ToString(request.op)));
    }
    if (request.phase2_url.empty()) return BranchReply::Failure("phase2_url: required");
    Result<std::string> name = PreparedTransactionName(request.gid, request.branch_id);
    if (!name) return BranchReply::Failure(name.status().message());

    {
      Result<std::unique_ptr<db::PgPool::Lease>> lease = pool_.Acquire();
      if (!lease) return BranchReply::Error(lease.status());
      if (Status s = Prepare(request, business, *name, ***lease); !s.ok()) {
        return BranchReply::Error(s);
      }
    }  // the connection goes back to the pool before the registration's call

    const Result<RegisteredBranch> registered = coordinator_.RegisterBranch(BranchRegistration{
        .gid = request.gid,
        .trans_type = "xa",
        .branch_id = request.branch_id,
        .urls = {{"url", request.phase2_url}},
        .traceparent = request.trace.empty() ? std::string() : request.trace.Traceparent(),
        .tracestate = request.trace.state});
    if (registered) return BranchReply::Success();

    // Not registered, or not known to be: this branch answers an error, so its global will
    // not be submitted, and the prepared transaction must not keep its locks until someone
    // notices (see the header).
    const Status& refusal = registered.status();
    std::string why = "registering " + BranchName(request) + ": " + refusal.message();
    const Status rolled_back = RollbackPrepared(*name);
    why += rolled_back.ok() ? "; its local transaction was rolled back"
                            : "; rolling back its prepared transaction " + QuoteLiteral(*name) +
                                  " failed too: " + rolled_back.message();
    const bool refused = refusal.code() == StatusCode::kConflict ||
                         refusal.code() == StatusCode::kInvalidArgument ||
                         refusal.code() == StatusCode::kNotFound;
    return refused ? BranchReply::Failure(std::move(why))
                   : BranchReply::Error(Status::Unavailable(std::move(why)));
  }

  Status PrepareStep(const XaRequest& request, const XaBusiness& business) {
    Result<std::string> name = PreparedTransactionName(request.gid, request.branch_id);
    if (!name) return Status::Conflict(name.status().message());
    // An earlier run prepared it and stopped before its step was recorded: done already. (A
    // second PREPARE would wait for ever on the barrier row the prepared one holds.)
    Result<std::unique_ptr<db::PgPool::Lease>> lease = pool_.Acquire();
    if (!lease) return lease.status();
    Result<bool> prepared = IsPrepared(***lease, *name);
    if (!prepared) return prepared.status();
    if (*prepared) return Status::Ok();
    return Prepare(request, business, *name, ***lease);
  }

  BranchReply Phase2(const XaRequest& request) {
    if (request.op == XaOp::kAction) {
      return BranchReply::Failure("op: phase 2 takes op=commit or op=rollback, not action");
    }
    const bool commit = request.op == XaOp::kCommit;
    Result<std::string> name = PreparedTransactionName(request.gid, request.branch_id);
    // A name too long to be prepared was never prepared.
    if (!name) return Unprepared(request, commit, false);

    Result<std::unique_ptr<db::PgPool::Lease>> lease = pool_.Acquire();
    if (!lease) return BranchReply::Error(lease.status());
    db::PgConnection& db = ***lease;
    const Status finished =
        db.Run((commit ? "COMMIT PREPARED " : "ROLLBACK PREPARED ") + QuoteLiteral(*name));
    if (finished.ok()) return BranchReply::Success();

    // Not finished now: either it is still prepared (the statement failed for another reason,
    // and the coordinator retries), or it is prepared no longer. Asked in this order, so that a
    // concurrent delivery's COMMIT PREPARED is seen either as still prepared or as committed.
    Result<bool> prepared = IsPrepared(db, *name);
    if (!prepared) return BranchReply::Error(prepared.status());
    if (*prepared) {
      return BranchReply::Error(
          Status(finished.code(), std::string(commit ? "committing " : "rolling back ") +
                                      BranchName(request) + ": " + finished.message()));
    }
    Result<bool> committed = HasCommitted(db, request);
    if (!committed) return BranchReply::Error(committed.status());
    return Unprepared(request, commit, *committed);
  }

 private:
  // Steps 1 to 3 of the header on `db`, a connection leased by the caller: OK once the
  // transaction is prepared.
  Status Prepare(const XaRequest& request, const XaBusiness& business, const std::string& name,
                 db::PgConnection& db) {
    // A pooled connection may have died while idle: BEGIN notices, and the retry connects
    // again.
    Status begun = db.Run("BEGIN; SET LOCAL synchronous_commit = on");
    if (!begun.ok()) begun = db.Run("BEGIN; SET LOCAL synchronous_commit = on");
    if (!begun.ok()) {
      return Status(begun.code(), "beginning " + BranchName(request) + ": " + begun.message());
    }
    // From here on, an early return rolls back: the caller's lease does when it goes back to the
    // pool.
    Result<db::PgResult> marked =
        db.Query(kInsertPostgresBarrierRowSql, db::PgParams()
                                                   .Text("xa")
                                                   .Text(request.gid)
                                                   .Text(request.branch_id)
                                                   .Text(kMarkOp)
                                                   .Text(kMarkBarrierId)
                                                   .Text(kMarkOp)
                                                   .Int(ToUnixMillis(clock_.Now())));
    if (!marked) {
      return Status(marked.status().code(),
                    "marking " + BranchName(request) + ": " + marked.status().message());
    }
    if (marked->affected() == 0) {
      // A call of the same branch prepared and committed before this one (a duplicate
      // delivery): its global was submitted, and there is nothing left to do.
      return Status::Conflict(BranchName(request) + " has already been committed");
    }

    if (Status s = Caught("the business code", [&] { return business(request, db); }); !s.ok()) {
      return s;
    }
    if (!db.InTransaction()) {
      return Status::Unavailable(BranchName(request) +
                                 ": the local transaction ended inside the business code (a "
                                 "COMMIT or ROLLBACK there, or the connection was lost)");
    }
    if (db.InFailedTransaction()) {
      return Status::Unavailable(BranchName(request) +
                                 ": a statement of the business code failed; rolled back");
    }
    const Status prepared = db.Run("PREPARE TRANSACTION " + QuoteLiteral(name));
    if (prepared.ok()) return Status::Ok();
    if (db.InTransaction()) db.Run("ROLLBACK").IgnoreError();
    // A connection lost during PREPARE leaves it unknown whether the server prepared: look, and
    // undo what may have been.
    if (prepared.code() == StatusCode::kUnavailable) RollbackPrepared(name).IgnoreError();
    return Status(prepared.code(), "preparing " + BranchName(request) + " as " +
                                       QuoteLiteral(name) + ": " + prepared.message());
  }

  // ROLLBACK PREPARED; OK too when the name is not prepared (any more).
  Status RollbackPrepared(const std::string& name) {
    Result<std::unique_ptr<db::PgPool::Lease>> lease = pool_.Acquire();
    if (!lease) return lease.status();
    db::PgConnection& db = ***lease;
    const Status rolled_back = db.Run("ROLLBACK PREPARED " + QuoteLiteral(name));
    if (rolled_back.ok()) return rolled_back;
    Result<bool> prepared = IsPrepared(db, name);
    if (!prepared) return prepared.status();
    return *prepared ? rolled_back : Status::Ok();
  }

  // The answer of phase 2 for a branch whose name is not prepared.
  BranchReply Unprepared(const XaRequest& request, bool commit, bool committed) {
    if (commit && committed) return BranchReply::Success();    // a repeated commit
    if (!commit && !committed) return BranchReply::Success();  // rolled back, or never prepared
    if (commit) {
      return BranchReply::Error(Status::Internal(
          "committing " + BranchName(request) +
          ": it is not prepared and has no committed barrier row: it was rolled back (or never "
          "prepared), and its changes are not in the database"));
    }
    return BranchReply::Error(Status::Internal("rolling back " + BranchName(request) +
                                               ": it has been committed already"));
  }

  static Result<bool> IsPrepared(db::PgConnection& db, const std::string& name) {
    Result<db::PgResult> rows = db.Query(kIsPreparedSql, db::PgParams().Text(name));
    if (!rows) return rows.status();
    return rows->rows() > 0;
  }

  // Whether the branch's barrier row is visible: its prepared transaction committed.
  static Result<bool> HasCommitted(db::PgConnection& db, const XaRequest& request) {
    Result<db::PgResult> rows =
        db.Query(kSelectPostgresBarrierReasonSql, db::PgParams()
                                                      .Text(request.gid)
                                                      .Text(request.branch_id)
                                                      .Text(kMarkOp)
                                                      .Text(kMarkBarrierId));
    if (!rows) return rows.status();
    return rows->rows() > 0;
  }

  db::PgPool pool_;
  CoordinatorLink& coordinator_;
  const Clock& clock_;
};

Result<std::unique_ptr<PostgresXa>> PostgresXa::Open(const std::string& conninfo,
                                                     CoordinatorLink& coordinator,
                                                     const Clock& clock,
                                                     PostgresXaOptions options) {
  auto impl = std::make_unique<Impl>(conninfo, coordinator, clock, options);
  Result<std::unique_ptr<db::PgPool::Lease>> lease = impl->pool().Acquire();
  if (!lease) return lease.status();
  if (Status s = (**lease)->Run(kCreatePostgresBarrierSchemaSql); !s.ok()) {
    return Status(s.code(), "creating the barrier table: " + s.message());
  }
  lease->reset();
  return std::unique_ptr<PostgresXa>(new PostgresXa(std::move(impl)));
}

PostgresXa::PostgresXa(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PostgresXa::~PostgresXa() = default;

BranchReply PostgresXa::LocalTransaction(const XaRequest& request, const XaBusiness& business) {
  return impl_->LocalTransaction(request, business);
}

Status PostgresXa::PrepareStep(const XaRequest& request, const XaBusiness& business) {
  return impl_->PrepareStep(request, business);
}

BranchReply PostgresXa::Phase2(const XaRequest& request) { return impl_->Phase2(request); }

XaHandler PostgresXa::Handler(XaBusiness business) {
  return [this, business = std::move(business)](const XaRequest& request) {
    return request.op == XaOp::kAction ? LocalTransaction(request, business) : Phase2(request);
  };
}

Result<std::string> PostgresXa::PreparedTransactionName(const std::string& gid,
                                                        const std::string& branch_id) {
  std::string name = std::string(kNamePrefix) + gid + "/" + branch_id;
  if (name.size() > kMaxNameBytes) {
    return Status::InvalidArgument(
        "gid: with the branch_id, longer than a PostgreSQL prepared transaction's name allows (" +
        std::to_string(kMaxNameBytes - kNamePrefix.size() - 1) + " characters together)");
  }
  return name;
}

}  // namespace settle::sdk
