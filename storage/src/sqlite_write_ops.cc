#include "sqlite_write_ops.h"

#include <string>
#include <type_traits>

#include "failed_attempts_codec.h"
#include "options_codec.h"
#include "sqlite_topic_ops.h"
#include "trace_codec.h"
#include "undone_rollbacks.h"

namespace settle::storage {
namespace {

// Every statement is a constant: the connection prepares it once and reuses it.
constexpr std::string_view kInsertGlobal =
    "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
    "finish_time, rollback_time, rollback_reason, next_cron_time, stuck, force_stopped, creator, "
    "trace, trace_parent, trace_state) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
    "ON CONFLICT (gid) DO NOTHING";

// Branch rows are keyed by their global's integer id (schema version 2); every statement
// finds it from the gid through trans_global's unique index.
//
// Inserts only if the global exists, so the common case is one statement; when nothing was
// inserted, a second look tells a duplicate from a missing global.
constexpr std::string_view kInsertBranch =
    "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, body, status, "
    "create_time, update_time, attempts, failures, last_error, next_retry_at, "
    "failed_attempts, body_of_branch, body_of_op) "
    "SELECT id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16 "
    "FROM trans_global WHERE gid = ?1 "
    "ON CONFLICT (global_id, branch_id, op) DO NOTHING";

// The audit trail (schema version 9).
constexpr std::string_view kInsertAudit =
    "INSERT INTO admin_audit (at, actor, action, gid, target, parameters, reason) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
constexpr std::string_view kDeleteAuditBefore = "DELETE FROM admin_audit WHERE at < ?1";

// Bulk jobs (schema version 11). A step or a cancel changes a running job only (a step only at
// the cursor it expects); nothing changed is told apart by kSelectJobState.
constexpr std::string_view kInsertJob =
    "INSERT INTO bulk_jobs (id, created_at, updated_at, actor, action, filter, parameters, "
    "reason, cursor, matched, acted, skipped, last_skip, state) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT (id) DO NOTHING";
constexpr std::string_view kAdvanceJob =
    "UPDATE bulk_jobs SET cursor = ?3, acted = acted + ?4, skipped = skipped + ?5, "
    "last_skip = coalesce(nullif(?6, ''), last_skip), updated_at = ?7, state = ?8 "
    "WHERE id = ?1 AND state = 'running' AND cursor = ?2";
constexpr std::string_view kCancelJob =
    "UPDATE bulk_jobs SET state = 'cancelled', updated_at = ?2 "
    "WHERE id = ?1 AND state = 'running'";
constexpr std::string_view kSelectJobState = "SELECT state FROM bulk_jobs WHERE id = ?1";
constexpr std::string_view kDeleteJobsBefore =
    "DELETE FROM bulk_jobs WHERE state <> 'running' AND updated_at < ?1";

#define SETTLE_GLOBAL_ID_OF_GID "(SELECT id FROM trans_global WHERE gid = ?1)"

// The length of the body a row holds itself (schema version 8): what a row sharing it checks.
constexpr std::string_view kSelectHeldBodyLength =
    "SELECT length(body) FROM trans_branch_op WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID
    " AND branch_id = ?2 AND op = ?3 AND body_of_branch = ''";

constexpr std::string_view kSelectBranchUrl =
    "SELECT url FROM trans_branch_op "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND branch_id = ?2 AND op = ?3";

constexpr std::string_view kSelectBranchStatus =
    "SELECT status FROM trans_branch_op "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND branch_id = ?2 AND op = ?3";

constexpr std::string_view kSelectGlobalStatus = "SELECT status FROM trans_global WHERE gid = ?1";
constexpr std::string_view kSelectGlobalType = "SELECT trans_type FROM trans_global WHERE gid = ?1";
constexpr std::string_view kSelectCreator = "SELECT creator FROM trans_global WHERE gid = ?1";

constexpr std::string_view kUpdateGlobal =
    "UPDATE trans_global SET status = ?1, update_time = ?2, finish_time = ?3, "
    "rollback_time = ?4, rollback_reason = ?5, next_cron_time = ?6, stuck = ?7, "
    "force_stopped = ?10, result = CASE WHEN length(?11) = 0 THEN result ELSE ?11 END "
    "WHERE gid = ?8 AND status = ?9";

constexpr std::string_view kUpdateBranch =
    "UPDATE trans_branch_op SET status = ?2, update_time = ?3, attempts = ?4, failures = ?5, "
    "last_error = ?6, next_retry_at = ?7, failed_attempts = ?11 "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID
    " AND branch_id = ?8 AND op = ?9 "
    "AND status = ?10 AND (?12 IS NULL OR (url = ?13 AND next_retry_at = ?12))";

// UpdateBranch's refusal of a row changed since its writer read it (write_batch.h).
constexpr std::string_view kChangedSinceRead = " was redirected or made due since it was read";

constexpr std::string_view kSelectBranchAsRead =
    "SELECT status, url, next_retry_at FROM trans_branch_op "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND branch_id = ?2 AND op = ?3";

constexpr std::string_view kRetryGlobal =
    "UPDATE trans_global SET next_cron_time = ?1 "
    "WHERE gid = ?2 AND status IN ('prepared', 'submitted', 'aborting')";

constexpr std::string_view kRetryBranches =
    "UPDATE trans_branch_op SET next_retry_at = ?2 "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND status = 'prepared'";

// Pause and resume (schema version 10): each changes an unfinished transaction only, and only
// one in the other state; nothing changed is told apart by PauseOrResumeRefusal.
constexpr std::string_view kPauseGlobal =
    "UPDATE trans_global SET paused_at = ?2, paused_by = ?3, paused_reason = ?4 "
    "WHERE gid = ?1 AND status IN ('prepared', 'submitted', 'aborting') AND paused_at IS NULL";
constexpr std::string_view kResumeGlobal =
    "UPDATE trans_global SET paused_at = NULL, paused_by = '', paused_reason = '', "
    "next_cron_time = ?2 "
    "WHERE gid = ?1 AND status IN ('prepared', 'submitted', 'aborting') AND paused_at IS NOT NULL";

constexpr std::string_view kRedirectBranch =
    "UPDATE trans_branch_op SET url = ?4, next_retry_at = ?5 "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID
    " AND branch_id = ?2 AND op = ?3 "
    "AND status = 'prepared'";

constexpr std::string_view kCountBranches =
    "SELECT count(*) FROM trans_branch_op WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID;

// A failed transaction whose cancels are still to be made (undone_rollbacks.h) is not deleted:
// the branch rows go first, and the global only once they are gone.
constexpr std::string_view kDeleteFinishedBranches =
    "DELETE FROM trans_branch_op WHERE global_id = "
    "(SELECT g.id FROM trans_global AS g WHERE g.gid = ?1 AND g.status IN ('succeed', 'failed') "
    "AND NOT " SETTLE_UNDONE_ROLLBACKS_OF("g") ")";

constexpr std::string_view kDeleteFinishedGlobal =
    "DELETE FROM trans_global AS g WHERE g.gid = ?1 AND g.status IN ('succeed', 'failed') "
    "AND NOT " SETTLE_UNDONE_ROLLBACKS_OF("g");

#undef SETTLE_GLOBAL_ID_OF_GID

std::optional<std::int64_t> Millis(const std::optional<TimePoint>& t) {
  if (!t) return std::nullopt;
  return ToUnixMillis(*t);
}

std::string BranchName(const BranchRecord& b) {
  return "branch " + b.branch_id + "/" + std::string(ToString(b.op)) + " of gid " + b.gid;
}

// The text in the first column of the row that `sql` (keyed by `?1`) selects for `key`, or
// nullopt if it selects none: a global's stored status (kSelectGlobalStatus by gid), a job's
// stored state (kSelectJobState by id).
Result<std::optional<std::string>> SelectText(db::SqliteConnection& c, std::string_view sql,
                                              const std::string& key) {
  Result<db::SqliteStatement> stmt = c.Prepare(sql);
  if (!stmt) return stmt.status();
  stmt->BindText(1, key);
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(stmt->ColumnBytes(0));
}

// Why a compare-and-set on a global matched no row.
Status GlobalCasFailure(db::SqliteConnection& c, const std::string& gid,
                        std::string_view expected) {
  Result<std::optional<std::string>> status = SelectText(c, kSelectGlobalStatus, gid);
  if (!status) return status.status();
  if (!*status) return Status::NotFound("gid " + gid + " not found");
  return Status::Conflict("gid " + gid + " is " + **status + ", expected " + std::string(expected));
}

Status Apply(db::SqliteConnection& c, const InsertGlobal& op) {
  const GlobalRecord& g = op.record;
  Result<std::string> options = EncodeOptions(g.options);
  if (!options) {
    return Status(options.status().code(), "gid " + g.gid + ": " + options.status().message());
  }
  const TraceColumns trace = EncodeTrace(g.trace);  // bound as is
  Result<db::SqliteStatement> stmt = c.Prepare(kInsertGlobal);
  if (!stmt) return stmt.status();
  stmt->BindText(1, g.gid)
      .BindText(2, ToString(g.trans_type))
      .BindText(3, ToString(g.status))
      .BindText(4, *options)
      .BindInt64(5, ToUnixMillis(g.create_time))
      .BindInt64(6, ToUnixMillis(g.update_time))
      .BindOptionalInt64(7, Millis(g.finish_time))
      .BindOptionalInt64(8, Millis(g.rollback_time))
      .BindText(9, g.rollback_reason)
      .BindOptionalInt64(10, Millis(g.next_cron_time))
      .BindInt64(11, g.stuck ? 1 : 0)
      .BindInt64(12, g.force_stopped ? 1 : 0)
      .BindText(13, g.creator)
      .BindText(14, trace.trace)
      .BindText(15, trace.parent)
      .BindText(16, trace.state);
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (c.Changes() == 0) return Status::AlreadyExists("gid " + g.gid + " already exists");
  return Status::Ok();
}

// A row inserted sharing `holder`'s body: the holder must hold one of the same length.
Status CheckBodyHolder(db::SqliteConnection& c, const BranchRecord& b, const BodyHolder& holder) {
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectHeldBodyLength);
  if (!stmt) return stmt.status();
  stmt->BindText(1, b.gid).BindText(2, holder.branch_id).BindText(3, ToString(holder.op));
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (*row && static_cast<std::size_t>(stmt->ColumnInt64(0)) == b.data.size()) {
    return Status::Ok();
  }
  return Status::Conflict(BranchName(b) + " shares the body of branch " + holder.branch_id + "/" +
                          std::string(ToString(holder.op)) + ", which holds no such body");
}

Status Apply(db::SqliteConnection& c, const InsertBranch& op) {
  const BranchRecord& b = op.record;
  const std::string failed_attempts = EncodeFailedAttempts(b.failed_attempts);  // bound as is
  // Bound as they are too: the statement reads them when it runs.
  const std::string body_of_branch = op.body_of ? op.body_of->branch_id : std::string();
  const std::string body_of_op = op.body_of ? std::string(ToString(op.body_of->op)) : "";
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kInsertBranch);
    if (!stmt) return stmt.status();
    stmt->BindText(1, b.gid)
        .BindText(2, b.branch_id)
        .BindText(3, ToString(b.op))
        .BindInt64(4, b.seq)
        .BindText(5, b.url)
        .BindBlob(6, op.body_of ? std::string_view() : b.data.view())
        .BindText(7, ToString(b.status))
        .BindInt64(8, ToUnixMillis(b.create_time))
        .BindInt64(9, ToUnixMillis(b.update_time))
        .BindInt64(10, b.attempts)
        .BindInt64(11, b.failures)
        .BindText(12, b.last_error)
        .BindInt64(13, ToUnixMillis(b.next_retry_at))
        .BindText(14, failed_attempts)
        .BindText(15, body_of_branch)
        .BindText(16, body_of_op);
    if (Status s = stmt->Run(); !s.ok()) return s;
    if (c.Changes() == 1) return op.body_of ? CheckBodyHolder(c, b, *op.body_of) : Status::Ok();
  }
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectBranchUrl);
  if (!stmt) return stmt.status();
  stmt->BindText(1, b.gid).BindText(2, b.branch_id).BindText(3, ToString(b.op));
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return Status::NotFound("gid " + b.gid + " not found");
  if (stmt->ColumnBytes(0) == b.url) return Status::Ok();
  return Status::Conflict(BranchName(b) + " is already registered with url " +
                          stmt->ColumnBytes(0));
}

Status Apply(db::SqliteConnection& c, const ExpectGlobalStatus& op) {
  Result<std::optional<std::string>> status = SelectText(c, kSelectGlobalStatus, op.gid);
  if (!status) return status.status();
  if (!*status) return Status::NotFound("gid " + op.gid + " not found");
  std::string expected;
  for (GlobalStatus allowed : op.allowed) {
    if (ToString(allowed) == **status) return Status::Ok();
    if (!expected.empty()) expected += " or ";
    expected += ToString(allowed);
  }
  return Status::Conflict("gid " + op.gid + " is " + **status + ", expected " +
                          (expected.empty() ? "no status" : expected));
}

// The number of branch rows of the gid; NotFound if it is unknown.
Result<std::size_t> BranchRowCount(db::SqliteConnection& c, const std::string& gid) {
  Result<std::optional<std::string>> status = SelectText(c, kSelectGlobalStatus, gid);
  if (!status) return status.status();
  if (!*status) return Status::NotFound("gid " + gid + " not found");
  Result<db::SqliteStatement> stmt = c.Prepare(kCountBranches);
  if (!stmt) return stmt.status();
  stmt->BindText(1, gid);
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  return static_cast<std::size_t>(*row ? stmt->ColumnInt64(0) : 0);
}

Status Apply(db::SqliteConnection& c, const ExpectGlobalType& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectGlobalType);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.gid);
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return Status::NotFound("gid " + op.gid + " not found");
  const std::string stored = stmt->ColumnBytes(0);
  if (stored == ToString(op.trans_type)) return Status::Ok();
  return Status::Conflict("gid " + op.gid + " is a " + stored + " transaction, not " +
                          std::string(ToString(op.trans_type)));
}

Status Apply(db::SqliteConnection& c, const ExpectCreator& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectCreator);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.gid);
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (*row) {
    const std::string stored = stmt->ColumnBytes(0);
    if (stored.empty() || stored == op.creator) return Status::Ok();
  }
  return Status::NotFound("gid " + op.gid + " not found");
}

Status Apply(db::SqliteConnection& c, const LimitBranchRows& op) {
  Result<std::size_t> count = BranchRowCount(c, op.gid);
  if (!count) return count.status();
  if (*count <= op.max_rows) return Status::Ok();
  return Status::ResourceExhausted("branch_id: gid " + op.gid + " would have " +
                                   std::to_string(*count) + " branch rows, more than the " +
                                   std::to_string(op.max_rows) + " allowed");
}

Status Apply(db::SqliteConnection& c, const ExpectBranchCount& op) {
  Result<std::size_t> counted = BranchRowCount(c, op.gid);
  if (!counted) return counted.status();
  const std::size_t count = *counted;
  if (count == op.count) return Status::Ok();
  return Status::Conflict("gid " + op.gid + " has " + std::to_string(count) +
                          " branch rows, expected " + std::to_string(op.count));
}

Status Apply(db::SqliteConnection& c, const UpdateGlobal& op) {
  const GlobalRecord& g = op.record;
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kUpdateGlobal);
    if (!stmt) return stmt.status();
    stmt->BindText(1, ToString(g.status))
        .BindInt64(2, ToUnixMillis(g.update_time))
        .BindOptionalInt64(3, Millis(g.finish_time))
        .BindOptionalInt64(4, Millis(g.rollback_time))
        .BindText(5, g.rollback_reason)
        .BindOptionalInt64(6, Millis(g.next_cron_time))
        .BindInt64(7, g.stuck ? 1 : 0)
        .BindText(8, g.gid)
        .BindText(9, ToString(op.expected))
        .BindInt64(10, g.force_stopped ? 1 : 0)
        .BindBlob(11, g.result);
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 1) return Status::Ok();
  return GlobalCasFailure(c, g.gid, ToString(op.expected));
}

Status Apply(db::SqliteConnection& c, const UpdateBranch& op) {
  const BranchRecord& b = op.record;
  const std::string failed_attempts = EncodeFailedAttempts(b.failed_attempts);  // bound as is
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kUpdateBranch);
    if (!stmt) return stmt.status();
    stmt->BindText(1, b.gid)
        .BindText(2, ToString(b.status))
        .BindInt64(3, ToUnixMillis(b.update_time))
        .BindInt64(4, b.attempts)
        .BindInt64(5, b.failures)
        .BindText(6, b.last_error)
        .BindInt64(7, ToUnixMillis(b.next_retry_at))
        .BindText(8, b.branch_id)
        .BindText(9, ToString(b.op))
        .BindText(10, ToString(op.expected))
        .BindText(11, failed_attempts)
        .BindText(13, b.url);
    stmt->BindOptionalInt64(12, Millis(op.read_next_retry_at));
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 1) return Status::Ok();
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectBranchAsRead);
  if (!stmt) return stmt.status();
  stmt->BindText(1, b.gid).BindText(2, b.branch_id).BindText(3, ToString(b.op));
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return Status::NotFound(BranchName(b) + " not found");
  const std::string status = stmt->ColumnBytes(0);
  if (status != ToString(op.expected)) {
    return Status::Conflict(BranchName(b) + " is " + status + ", expected " +
                            std::string(ToString(op.expected)));
  }
  return Status::Conflict(BranchName(b) + std::string(kChangedSinceRead));
}

Status Apply(db::SqliteConnection& c, const RetryNow& op) {
  const std::int64_t at = ToUnixMillis(op.at);
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kRetryGlobal);
    if (!stmt) return stmt.status();
    stmt->BindInt64(1, at).BindText(2, op.gid);
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 0) {
    Result<std::optional<std::string>> status = SelectText(c, kSelectGlobalStatus, op.gid);
    if (!status) return status.status();
    if (!*status) return Status::NotFound("gid " + op.gid + " not found");
    return Status::Conflict("gid " + op.gid + " is " + **status + ", already finished");
  }
  Result<db::SqliteStatement> stmt = c.Prepare(kRetryBranches);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.gid).BindInt64(2, at);
  return stmt->Run();
}

// Why a pause (`pausing`) or a resume changed nothing: NotFound, or the Conflict naming the
// state it found. OK for a pause with `keep_existing` of a transaction already paused.
Status PauseOrResumeRefusal(db::SqliteConnection& c, const std::string& gid, bool pausing,
                            bool keep_existing) {
  Result<std::optional<std::string>> status = SelectText(c, kSelectGlobalStatus, gid);
  if (!status) return status.status();
  if (!*status) return Status::NotFound("gid " + gid + " not found");
  const std::optional<GlobalStatus> parsed = ParseGlobalStatus(**status);
  if (parsed && IsTerminal(*parsed)) {
    return Status::Conflict("gid " + gid + " is " + **status + ", already finished");
  }
  if (!pausing) return Status::Conflict("gid " + gid + " is not paused");
  return keep_existing ? Status::Ok() : Status::Conflict("gid " + gid + " is already paused");
}

Status Apply(db::SqliteConnection& c, const PauseGlobal& op) {
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kPauseGlobal);
    if (!stmt) return stmt.status();
    stmt->BindText(1, op.gid)
        .BindInt64(2, ToUnixMillis(op.pause.at))
        .BindText(3, op.pause.by)
        .BindText(4, op.pause.reason);
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 1) return Status::Ok();
  return PauseOrResumeRefusal(c, op.gid, true, op.keep_existing);
}

Status Apply(db::SqliteConnection& c, const ResumeGlobal& op) {
  const std::int64_t at = ToUnixMillis(op.at);
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kResumeGlobal);
    if (!stmt) return stmt.status();
    stmt->BindText(1, op.gid).BindInt64(2, at);
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 0) return PauseOrResumeRefusal(c, op.gid, false, false);
  Result<db::SqliteStatement> stmt = c.Prepare(kRetryBranches);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.gid).BindInt64(2, at);
  return stmt->Run();
}

Status Apply(db::SqliteConnection& c, const RedirectBranch& op) {
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kRedirectBranch);
    if (!stmt) return stmt.status();
    stmt->BindText(1, op.gid)
        .BindText(2, op.branch_id)
        .BindText(3, ToString(op.op))
        .BindText(4, op.url)
        .BindInt64(5, ToUnixMillis(op.at));
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 1) return Status::Ok();
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectBranchStatus);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.gid).BindText(2, op.branch_id).BindText(3, ToString(op.op));
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  const std::string name =
      "branch " + op.branch_id + " (" + std::string(ToString(op.op)) + ") of gid " + op.gid;
  if (!*row) return Status::NotFound(name + " not found");
  return Status::Conflict(name + " is " + stmt->ColumnBytes(0) + ", not pending");
}

Status Apply(db::SqliteConnection& c, const InsertJob& op) {
  const BulkJob& j = op.job;
  Result<db::SqliteStatement> stmt = c.Prepare(kInsertJob);
  if (!stmt) return stmt.status();
  stmt->BindText(1, j.id)
      .BindInt64(2, ToUnixMillis(j.created_at))
      .BindInt64(3, ToUnixMillis(j.updated_at))
      .BindText(4, j.actor)
      .BindText(5, j.action)
      .BindText(6, j.filter)
      .BindText(7, j.parameters)
      .BindText(8, j.reason)
      .BindInt64(9, j.cursor)
      .BindInt64(10, j.matched)
      .BindInt64(11, j.acted)
      .BindInt64(12, j.skipped)
      .BindText(13, j.last_skip)
      .BindText(14, ToString(j.state));
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (c.Changes() == 0) return Status::AlreadyExists("job " + j.id + " already exists");
  return Status::Ok();
}

Status Apply(db::SqliteConnection& c, const AdvanceJob& op) {
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kAdvanceJob);
    if (!stmt) return stmt.status();
    stmt->BindText(1, op.id)
        .BindInt64(2, op.expected_cursor)
        .BindInt64(3, op.cursor)
        .BindInt64(4, op.acted)
        .BindInt64(5, op.skipped)
        .BindText(6, op.last_skip)
        .BindInt64(7, ToUnixMillis(op.at))
        .BindText(8, ToString(op.state));
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 1) return Status::Ok();
  Result<std::optional<std::string>> state = SelectText(c, kSelectJobState, op.id);
  if (!state) return state.status();
  if (!*state) return Status::NotFound("job " + op.id + " not found");
  return Status::Conflict("job " + op.id + " moved on");
}

Status Apply(db::SqliteConnection& c, const CancelJob& op) {
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kCancelJob);
    if (!stmt) return stmt.status();
    stmt->BindText(1, op.id).BindInt64(2, ToUnixMillis(op.at));
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  if (c.Changes() == 1) return Status::Ok();
  Result<std::optional<std::string>> state = SelectText(c, kSelectJobState, op.id);
  if (!state) return state.status();
  if (!*state) return Status::NotFound("job " + op.id + " not found");
  return Status::Conflict("job " + op.id + " is " + **state + ", not running");
}

Status Apply(db::SqliteConnection& c, const DeleteJobsBefore& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kDeleteJobsBefore);
  if (!stmt) return stmt.status();
  stmt->BindInt64(1, ToUnixMillis(op.cutoff));
  return stmt->Run();
}

Status Apply(db::SqliteConnection& c, const DeleteFinished& op) {
  {
    Result<db::SqliteStatement> stmt = c.Prepare(kDeleteFinishedBranches);
    if (!stmt) return stmt.status();
    stmt->BindText(1, op.gid);
    if (Status s = stmt->Run(); !s.ok()) return s;
  }
  Result<db::SqliteStatement> stmt = c.Prepare(kDeleteFinishedGlobal);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.gid);
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (c.Changes() > 0) return Status::Ok();
  Result<std::optional<std::string>> status = SelectText(c, kSelectGlobalStatus, op.gid);
  if (!status) return status.status();
  if (!*status) return Status::Ok();
  if (**status == ToString(GlobalStatus::kFailed)) {
    return Status::Conflict("gid " + op.gid + " is failed with cancels still to be made");
  }
  return Status::Conflict("gid " + op.gid + " is " + **status + ", not finished");
}

// Topics: sqlite_topic_ops.h.
Status Apply(db::SqliteConnection& c, const Subscribe& op) { return ApplyTopicOp(c, op); }
Status Apply(db::SqliteConnection& c, const Unsubscribe& op) { return ApplyTopicOp(c, op); }
Status Apply(db::SqliteConnection& c, const DeleteTopic& op) { return ApplyTopicOp(c, op); }
Status Apply(db::SqliteConnection& c, const ExpectTopicCreator& op) { return ApplyTopicOp(c, op); }

}  // namespace

Status Apply(db::SqliteConnection& c, const RecordAudit& op) {
  const AuditEntry& e = op.entry;
  Result<db::SqliteStatement> stmt = c.Prepare(kInsertAudit);
  if (!stmt) return stmt.status();
  stmt->BindInt64(1, ToUnixMillis(e.at))
      .BindText(2, e.actor)
      .BindText(3, e.action)
      .BindText(4, e.gid)
      .BindText(5, e.target)
      .BindText(6, e.parameters)
      .BindText(7, e.reason);
  return stmt->Run();
}

Status Apply(db::SqliteConnection& c, const DeleteAuditBefore& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kDeleteAuditBefore);
  if (!stmt) return stmt.status();
  stmt->BindInt64(1, ToUnixMillis(op.cutoff));
  return stmt->Run();
}

Status ApplyWriteOp(db::SqliteConnection& connection, const WriteOp& op) {
  return std::visit([&connection](const auto& o) { return Apply(connection, o); }, op);
}

}  // namespace settle::storage
