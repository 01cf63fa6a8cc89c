#include "schema.h"

#include <array>
#include <string>

namespace settle::storage {
namespace {

// Forward-only migrations; migration i (0-based) brings the file to version i + 1. Never edit
// a migration that has shipped: add a new one.
//
// trans_global: one row per transaction. `id` orders transactions for List's keyset paging;
// AUTOINCREMENT keeps ids increasing even if the newest rows are ever deleted (cleanup).
// Indexes: (status, id) and (trans_type, id) serve List's filters in id order, so a filtered
// page is an index range scan; (status, id) also serves ListUnfinished, which then touches only
// unfinished entries however many finished transactions accumulate. Stuck transactions are
// rare: a partial index holds only them, and costs nothing on the insert path.
//
// trans_branch_op (version 1): WITHOUT ROWID, clustered on (gid, branch_id, op): a
// transaction's branch rows are contiguous, so Load reads them with one range scan and an
// insert writes one b-tree instead of a table plus a primary-key index. `data` is a BLOB:
// bodies are any bytes.
//
// Version 2 clusters trans_branch_op on the global's integer id instead of its gid. Ids only
// grow, so new branch rows are appended at the right edge of the b-tree and a busy
// transaction's rows sit in the few pages every commit already writes; gids are arbitrary
// text, and clustering on them put each transaction's rows in a page of their own, which made
// every group commit write (and fsync) a WAL frame per transaction in it.
//
// Version 3 indexes finished transactions by finish_time (a partial index: unfinished ones,
// which have none, cost nothing in it), so that retention finds the oldest ones to delete
// without scanning the table.
//
// Version 4 keeps each branch's latest failed calls (failed_attempts, JSON; '' for none).
//
// Version 5 adds topic subscriptions: one row per (topic, url), kept so by a unique index that
// also finds a topic's rows. `seq` is the subscription order: AUTOINCREMENT never hands out a
// number again, so a url that subscribes anew comes after every subscriber already there,
// whatever their create_time says. A topic is its rows; it has no row of its own.
//
// Version 6 marks the transactions an operator force-stopped (force_stopped): their undone
// calls stay undone, while a failed TCC or XA left with an undone cancel by the
// timeout/registration race is repaired (undone_rollbacks.h). Before this version only the
// reason told; the transactions it names are marked.
//
// Version 7 stores who created each transaction and each topic subscription (creator: the
// caller's name, docs/protocol.md §1.6), indexed with the id so that a client's List is an
// index range scan. Rows from before have none (''): they belong to nobody, and any client may
// act on them as before.
//
// Version 8 stores a body once per transaction however many rows carry it (a message's
// deliveries to a topic's subscribers, a saga step's action and compensate, a TCC branch's
// confirm and cancel; write_batch.h InsertBranch): a row that shares another's body names it
// in (body_of_branch, body_of_op) and keeps none itself ('' for a row that holds its own).
// `data` is renamed `body` on the way, so that a Settle of an earlier version, which would read
// a sharing row's body as empty and send that, fails on the table instead.
//
// Version 9 adds the audit trail: one row per operator action (force stop, retry now, ...),
// written in the action's own commit. `id` orders them; the partial index finds one
// transaction's entries (host actions have no gid).
//
// Version 10 adds pause and resume (GlobalRecord::paused): paused_at (NULL: not paused),
// paused_by and paused_reason, and a partial index on the paused rows for the parked list. A
// paused transaction is not among the unfinished ones resumed at start.
//
// Version 11 adds bulk jobs (records.h BulkJob): one row per job, keyed by the id the
// coordinator chose; a step (AdvanceJob) is a compare-and-set on its cursor and state. Like
// admin_audit's, the texts an operator sent (actor, filter, parameters, reason) and last_skip
// hold any bytes. Jobs are few and retention deletes the finished ones: the primary key is
// their only index.
//
// Version 12 stores each transaction's span (W3C Trace Context, GlobalRecord::trace;
// trace_codec.h): trace, the span as its traceparent; trace_parent, the caller's span it is a
// child of; trace_state, the tracestate. Written by the insert alone, never updated. Rows from
// before have none ('' in all three). Nothing searches them: no index.
//
// Version 13 adds a workflow's result (GlobalRecord::result): any bytes, x'' for none and in
// every row from before; written by the update that finishes the workflow.
//
// Version 14 indexes the transactions the rollback repair looks for (undone_rollbacks.h): a
// partial index on the finish_time of failed TCC and XA transactions that no operator
// force-stopped. The repair's sweep, at start and every minute, read every transaction that
// finished since the last sweep (at start: all of them, a million rows on a long history);
// it reads only these now, a few in a healthy history. Building it reads the table once.
constexpr std::array<const char*, 14> kMigrations = {
    R"sql(
CREATE TABLE trans_global (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  gid             TEXT    NOT NULL UNIQUE,
  trans_type      TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  options         TEXT    NOT NULL,
  create_time     INTEGER NOT NULL,
  update_time     INTEGER NOT NULL,
  finish_time     INTEGER,
  rollback_time   INTEGER,
  rollback_reason TEXT    NOT NULL DEFAULT '',
  next_cron_time  INTEGER,
  stuck           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trans_global_status ON trans_global (status, id);
CREATE INDEX trans_global_trans_type ON trans_global (trans_type, id);
CREATE INDEX trans_global_stuck ON trans_global (id) WHERE stuck = 1;

CREATE TABLE trans_branch_op (
  gid           TEXT    NOT NULL,
  branch_id     TEXT    NOT NULL,
  op            TEXT    NOT NULL,
  seq           INTEGER NOT NULL,
  url           TEXT    NOT NULL,
  data          BLOB    NOT NULL,
  status        TEXT    NOT NULL,
  create_time   INTEGER NOT NULL,
  update_time   INTEGER NOT NULL,
  attempts      INTEGER NOT NULL DEFAULT 0,
  failures      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT    NOT NULL DEFAULT '',
  next_retry_at INTEGER NOT NULL,
  PRIMARY KEY (gid, branch_id, op)
) WITHOUT ROWID;
)sql",
    R"sql(
CREATE TABLE trans_branch_op_v2 (
  global_id     INTEGER NOT NULL,
  branch_id     TEXT    NOT NULL,
  op            TEXT    NOT NULL,
  seq           INTEGER NOT NULL,
  url           TEXT    NOT NULL,
  data          BLOB    NOT NULL,
  status        TEXT    NOT NULL,
  create_time   INTEGER NOT NULL,
  update_time   INTEGER NOT NULL,
  attempts      INTEGER NOT NULL DEFAULT 0,
  failures      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT    NOT NULL DEFAULT '',
  next_retry_at INTEGER NOT NULL,
  PRIMARY KEY (global_id, branch_id, op)
) WITHOUT ROWID;
INSERT INTO trans_branch_op_v2
  SELECT g.id, b.branch_id, b.op, b.seq, b.url, b.data, b.status, b.create_time,
         b.update_time, b.attempts, b.failures, b.last_error, b.next_retry_at
  FROM trans_branch_op AS b JOIN trans_global AS g ON g.gid = b.gid;
DROP TABLE trans_branch_op;
ALTER TABLE trans_branch_op_v2 RENAME TO trans_branch_op;
)sql",
    R"sql(
CREATE INDEX trans_global_finish_time ON trans_global (finish_time)
  WHERE finish_time IS NOT NULL;
)sql",
    R"sql(
ALTER TABLE trans_branch_op ADD COLUMN failed_attempts TEXT NOT NULL DEFAULT '';
)sql",
    R"sql(
CREATE TABLE topic_subscriber (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  topic       TEXT    NOT NULL,
  url         TEXT    NOT NULL,
  remark      TEXT    NOT NULL DEFAULT '',
  create_time INTEGER NOT NULL,
  UNIQUE (topic, url)
);
)sql",
    R"sql(
ALTER TABLE trans_global ADD COLUMN force_stopped INTEGER NOT NULL DEFAULT 0;
UPDATE trans_global SET force_stopped = 1
  WHERE status = 'failed' AND rollback_reason GLOB '*stopped by an operator (forceStop*';
)sql",
    R"sql(
ALTER TABLE trans_global ADD COLUMN creator TEXT NOT NULL DEFAULT '';
CREATE INDEX trans_global_creator ON trans_global (creator, id);
ALTER TABLE topic_subscriber ADD COLUMN creator TEXT NOT NULL DEFAULT '';
)sql",
    R"sql(
ALTER TABLE trans_branch_op RENAME COLUMN data TO body;
ALTER TABLE trans_branch_op ADD COLUMN body_of_branch TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_branch_op ADD COLUMN body_of_op TEXT NOT NULL DEFAULT '';
)sql",
    R"sql(
CREATE TABLE admin_audit (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  actor      TEXT    NOT NULL,
  action     TEXT    NOT NULL,
  gid        TEXT    NOT NULL DEFAULT '',
  target     TEXT    NOT NULL DEFAULT '',
  parameters TEXT    NOT NULL DEFAULT '{}',
  reason     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX admin_audit_gid ON admin_audit (gid, id) WHERE gid <> '';
)sql",
    R"sql(
ALTER TABLE trans_global ADD COLUMN paused_at INTEGER;
ALTER TABLE trans_global ADD COLUMN paused_by TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_global ADD COLUMN paused_reason TEXT NOT NULL DEFAULT '';
CREATE INDEX trans_global_paused ON trans_global (id) WHERE paused_at IS NOT NULL;
)sql",
    R"sql(
CREATE TABLE bulk_jobs (
  id         TEXT    PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  actor      TEXT    NOT NULL,
  action     TEXT    NOT NULL,
  filter     TEXT    NOT NULL,
  parameters TEXT    NOT NULL,
  reason     TEXT    NOT NULL,
  cursor     INTEGER NOT NULL,
  matched    INTEGER NOT NULL,
  acted      INTEGER NOT NULL,
  skipped    INTEGER NOT NULL,
  last_skip  TEXT    NOT NULL,
  state      TEXT    NOT NULL
);
)sql",
    R"sql(
ALTER TABLE trans_global ADD COLUMN trace TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_global ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_global ADD COLUMN trace_state TEXT NOT NULL DEFAULT '';
)sql",
    R"sql(
ALTER TABLE trans_global ADD COLUMN result BLOB NOT NULL DEFAULT x'';
)sql",
    R"sql(
CREATE INDEX trans_global_failed_rollbacks ON trans_global (finish_time)
  WHERE status = 'failed' AND force_stopped = 0 AND trans_type IN ('tcc', 'xa');
)sql",
};

Status RollbackQuietly(db::SqliteConnection& connection, Status cause) {
  if (connection.InTransaction()) connection.Exec("ROLLBACK").IgnoreError();
  return cause;
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Result<int> ReadSchemaVersion(db::SqliteConnection& connection) {
  Result<db::SqliteStatement> stmt = connection.Prepare("PRAGMA user_version");
  if (!stmt) return stmt.status();
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return Status::Internal("sqlite: PRAGMA user_version returned no row");
  return static_cast<int>(stmt->ColumnInt64(0));
}

Status MigrateSchema(db::SqliteConnection& connection) {
  return MigrateSchema(connection, LatestSchemaVersion());
}

Status MigrateSchema(db::SqliteConnection& connection, int target_version) {
  Result<int> version = ReadSchemaVersion(connection);
  if (!version) return version.status();
  const int latest = LatestSchemaVersion();
  if (target_version < 1 || target_version > latest) {
    return Status::InvalidArgument("no schema version " + std::to_string(target_version));
  }
  if (*version > latest) {
    return Status::Unavailable("database schema version " + std::to_string(*version) +
                               " is newer than this binary's version " + std::to_string(latest) +
                               "; upgrade Settle to open it");
  }
  for (int next = *version + 1; next <= target_version; ++next) {
    if (Status s = connection.Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
    Status s = connection.Exec(kMigrations[next - 1]);
    if (s.ok()) s = connection.Exec("PRAGMA user_version = " + std::to_string(next));
    if (s.ok()) s = connection.Exec("COMMIT");
    if (!s.ok()) {
      return RollbackQuietly(
          connection, Status::Unavailable("migrating schema to version " + std::to_string(next) +
                                          ": " + s.message()));
    }
  }
  return Status::Ok();
}

}  // namespace settle::storage
