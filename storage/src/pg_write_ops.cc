#include "pg_write_ops.h"

#include <string>

#include "failed_attempts_codec.h"
#include "options_codec.h"

namespace settle::storage {
namespace {

// Statements are constants: the connection prepares each once. Parameters are typed by the
// casts, so that binary BYTEA parameters and integers are never guessed.
constexpr std::string_view kInsertGlobal =
    "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
    "finish_time, rollback_time, rollback_reason, next_cron_time, stuck) "
    "VALUES ($1::text, $2::text, $3::text, $4::bytea, $5::bigint, $6::bigint, $7::bigint, "
    "$8::bigint, $9::bytea, $10::bigint, $11::integer) ON CONFLICT (gid) DO NOTHING";

// Inserts only if the global exists, so the common case is one statement; when nothing was
// inserted, a second look tells a duplicate from a missing global.
constexpr std::string_view kInsertBranch =
    "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, status, "
    "create_time, update_time, attempts, failures, last_error, next_retry_at, failed_attempts) "
    "SELECT id, $2::text, $3::text, $4::integer, $5::text, $6::bytea, $7::text, $8::bigint, "
    "$9::bigint, $10::integer, $11::integer, $12::bytea, $13::bigint, $14::bytea "
    "FROM trans_global WHERE gid = $1::text "
    "ON CONFLICT (global_id, branch_id, op) DO NOTHING";

#define SETTLE_GLOBAL_ID_OF_GID "(SELECT id FROM trans_global WHERE gid = $1::text)"

constexpr std::string_view kSelectBranch =
    "SELECT url, status FROM trans_branch_op "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND branch_id = $2::text AND op = $3::text";

constexpr std::string_view kSelectGlobalStatus =
    "SELECT status FROM trans_global WHERE gid = $1::text";

constexpr std::string_view kUpdateGlobal =
    "UPDATE trans_global SET status = $1::text, update_time = $2::bigint, "
    "finish_time = $3::bigint, rollback_time = $4::bigint, rollback_reason = $5::bytea, "
    "next_cron_time = $6::bigint, stuck = $7::integer "
    "WHERE gid = $8::text AND status = $9::text";

constexpr std::string_view kUpdateBranch =
    "UPDATE trans_branch_op SET status = $2::text, update_time = $3::bigint, "
    "attempts = $4::integer, failures = $5::integer, last_error = $6::bytea, "
    "next_retry_at = $7::bigint, failed_attempts = $11::bytea "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND branch_id = $8::text AND op = $9::text "
    "AND status = $10::text";

constexpr std::string_view kRetryGlobal =
    "UPDATE trans_global SET next_cron_time = $1::bigint "
    "WHERE gid = $2::text AND status IN ('prepared', 'submitted', 'aborting')";

constexpr std::string_view kRetryBranches =
    "UPDATE trans_branch_op SET next_retry_at = $2::bigint "
    "WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID " AND status = 'prepared'";

// The global's status (NULL for an unknown gid: the outer SELECT always returns one row) and
// its branch count.
constexpr std::string_view kStatusAndBranchCount =
    "SELECT (SELECT status FROM trans_global WHERE gid = $1::text), "
    "(SELECT count(*) FROM trans_branch_op WHERE global_id = " SETTLE_GLOBAL_ID_OF_GID ")";

// Both tables in one statement: the branch rows go only if the global is finished.
constexpr std::string_view kDeleteFinished =
    "WITH g AS (DELETE FROM trans_global WHERE gid = $1::text "
    "AND status IN ('succeed', 'failed') RETURNING id) "
    "DELETE FROM trans_branch_op WHERE global_id IN (SELECT id FROM g)";

#undef SETTLE_GLOBAL_ID_OF_GID

std::optional<std::int64_t> Millis(const std::optional<TimePoint>& t) {
  if (!t) return std::nullopt;
  return ToUnixMillis(*t);
}

std::string BranchName(const BranchRecord& b) {
  return "branch " + b.branch_id + "/" + std::string(ToString(b.op)) + " of gid " + b.gid;
}

// The stored status text of the global, or nullopt if the gid is unknown.
Result<std::optional<std::string>> GlobalStatusOf(PgConnection& c, const std::string& gid) {
  Result<PgResult> rows = c.Query(kSelectGlobalStatus, PgParams().Text(gid));
  if (!rows) return rows.status();
  if (rows->rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(rows->Text(0, 0));
}

// Why a compare-and-set on a global matched no row.
Status GlobalCasFailure(PgConnection& c, const std::string& gid, std::string_view expected) {
  Result<std::optional<std::string>> status = GlobalStatusOf(c, gid);
  if (!status) return status.status();
  if (!*status) return Status::NotFound("gid " + gid + " not found");
  return Status::Conflict("gid " + gid + " is " + **status + ", expected " + std::string(expected));
}

Status Apply(PgConnection& c, const InsertGlobal& op) {
  const GlobalRecord& g = op.record;
  Result<std::string> options = EncodeOptions(g.options);
  if (!options) {
    return Status(options.status().code(), "gid " + g.gid + ": " + options.status().message());
  }
  Result<PgResult> inserted = c.Query(kInsertGlobal, PgParams()
                                                         .Text(g.gid)
                                                         .Text(ToString(g.trans_type))
                                                         .Text(ToString(g.status))
                                                         .Bytes(*options)
                                                         .Int(ToUnixMillis(g.create_time))
                                                         .Int(ToUnixMillis(g.update_time))
                                                         .OptionalInt(Millis(g.finish_time))
                                                         .OptionalInt(Millis(g.rollback_time))
                                                         .Bytes(g.rollback_reason)
                                                         .OptionalInt(Millis(g.next_cron_time))
                                                         .Int(g.stuck ? 1 : 0));
  if (!inserted) return inserted.status();
  if (inserted->affected() == 0) return Status::AlreadyExists("gid " + g.gid + " already exists");
  return Status::Ok();
}

Status Apply(PgConnection& c, const InsertBranch& op) {
  const BranchRecord& b = op.record;
  Result<PgResult> inserted =
      c.Query(kInsertBranch, PgParams()
                                 .Text(b.gid)
                                 .Text(b.branch_id)
                                 .Text(ToString(b.op))
                                 .Int(b.seq)
                                 .Text(b.url)
                                 .Bytes(b.data)
                                 .Text(ToString(b.status))
                                 .Int(ToUnixMillis(b.create_time))
                                 .Int(ToUnixMillis(b.update_time))
                                 .Int(b.attempts)
                                 .Int(b.failures)
                                 .Bytes(b.last_error)
                                 .Int(ToUnixMillis(b.next_retry_at))
                                 .Bytes(EncodeFailedAttempts(b.failed_attempts)));
  if (!inserted) return inserted.status();
  if (inserted->affected() == 1) return Status::Ok();
  Result<PgResult> row =
      c.Query(kSelectBranch, PgParams().Text(b.gid).Text(b.branch_id).Text(ToString(b.op)));
  if (!row) return row.status();
  if (row->rows() == 0) return Status::NotFound("gid " + b.gid + " not found");
  if (row->Text(0, 0) == b.url) return Status::Ok();
  return Status::Conflict(BranchName(b) + " is already registered with url " + row->Text(0, 0));
}

Status Apply(PgConnection& c, const ExpectGlobalStatus& op) {
  Result<std::optional<std::string>> status = GlobalStatusOf(c, op.gid);
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
Result<std::size_t> BranchRowCount(PgConnection& c, const std::string& gid) {
  Result<PgResult> row = c.Query(kStatusAndBranchCount, PgParams().Text(gid));
  if (!row) return row.status();
  if (row->IsNull(0, 0)) return Status::NotFound("gid " + gid + " not found");
  return static_cast<std::size_t>(row->Int(0, 1));
}

Status Apply(PgConnection& c, const LimitBranchRows& op) {
  Result<std::size_t> count = BranchRowCount(c, op.gid);
  if (!count) return count.status();
  if (*count <= op.max_rows) return Status::Ok();
  return Status::InvalidArgument("branch_id: gid " + op.gid + " would have " +
                                 std::to_string(*count) + " branch rows, more than the " +
                                 std::to_string(op.max_rows) + " allowed");
}

Status Apply(PgConnection& c, const ExpectBranchCount& op) {
  Result<std::size_t> count = BranchRowCount(c, op.gid);
  if (!count) return count.status();
  if (*count == op.count) return Status::Ok();
  return Status::Conflict("gid " + op.gid + " has " + std::to_string(*count) +
                          " branch rows, expected " + std::to_string(op.count));
}

Status Apply(PgConnection& c, const UpdateGlobal& op) {
  const GlobalRecord& g = op.record;
  Result<PgResult> updated = c.Query(kUpdateGlobal, PgParams()
                                                        .Text(ToString(g.status))
                                                        .Int(ToUnixMillis(g.update_time))
                                                        .OptionalInt(Millis(g.finish_time))
                                                        .OptionalInt(Millis(g.rollback_time))
                                                        .Bytes(g.rollback_reason)
                                                        .OptionalInt(Millis(g.next_cron_time))
                                                        .Int(g.stuck ? 1 : 0)
                                                        .Text(g.gid)
                                                        .Text(ToString(op.expected)));
  if (!updated) return updated.status();
  if (updated->affected() == 1) return Status::Ok();
  return GlobalCasFailure(c, g.gid, ToString(op.expected));
}

Status Apply(PgConnection& c, const UpdateBranch& op) {
  const BranchRecord& b = op.record;
  Result<PgResult> updated = c.Query(kUpdateBranch, PgParams()
                                                        .Text(b.gid)
                                                        .Text(ToString(b.status))
                                                        .Int(ToUnixMillis(b.update_time))
                                                        .Int(b.attempts)
                                                        .Int(b.failures)
                                                        .Bytes(b.last_error)
                                                        .Int(ToUnixMillis(b.next_retry_at))
                                                        .Text(b.branch_id)
                                                        .Text(ToString(b.op))
                                                        .Text(ToString(op.expected))
                                                        .Bytes(EncodeFailedAttempts(
                                                            b.failed_attempts)));
  if (!updated) return updated.status();
  if (updated->affected() == 1) return Status::Ok();
  Result<PgResult> row =
      c.Query(kSelectBranch, PgParams().Text(b.gid).Text(b.branch_id).Text(ToString(b.op)));
  if (!row) return row.status();
  if (row->rows() == 0) return Status::NotFound(BranchName(b) + " not found");
  return Status::Conflict(BranchName(b) + " is " + row->Text(0, 1) + ", expected " +
                          std::string(ToString(op.expected)));
}

Status Apply(PgConnection& c, const RetryNow& op) {
  const std::int64_t at = ToUnixMillis(op.at);
  Result<PgResult> updated = c.Query(kRetryGlobal, PgParams().Int(at).Text(op.gid));
  if (!updated) return updated.status();
  if (updated->affected() == 0) {
    Result<std::optional<std::string>> status = GlobalStatusOf(c, op.gid);
    if (!status) return status.status();
    if (!*status) return Status::NotFound("gid " + op.gid + " not found");
    return Status::Conflict("gid " + op.gid + " is " + **status + ", already finished");
  }
  Result<PgResult> branches = c.Query(kRetryBranches, PgParams().Text(op.gid).Int(at));
  if (!branches) return branches.status();
  return Status::Ok();
}

Status Apply(PgConnection& c, const DeleteFinished& op) {
  Result<PgResult> deleted = c.Query(kDeleteFinished, PgParams().Text(op.gid));
  if (!deleted) return deleted.status();
  Result<std::optional<std::string>> status = GlobalStatusOf(c, op.gid);
  if (!status) return status.status();
  if (!*status) return Status::Ok();  // deleted now, or before
  return Status::Conflict("gid " + op.gid + " is " + **status + ", not finished");
}

}  // namespace

Status ApplyWriteOp(PgConnection& connection, const WriteOp& op) {
  return std::visit([&connection](const auto& o) { return Apply(connection, o); }, op);
}

}  // namespace settle::storage
