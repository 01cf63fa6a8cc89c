#include "pg_schema.h"

#include <array>
#include <string>

namespace settle::storage {
namespace {

// Forward-only migrations; migration i (0-based) brings the database to version i + 1. Never
// edit a migration that has shipped: add a new one.
//
// The tables mirror the SQLite schema at its version 4 (see schema.cc): times are Unix
// milliseconds; branch rows are keyed by their global's id. Bodies, errors, options and
// reasons are BYTEA: they carry whatever bytes a client or participant sent, which TEXT
// would refuse (NUL bytes, invalid UTF-8). gid, branch_id and url are TEXT; the coordinator
// validates them before they get here.
constexpr std::array<const char*, 1> kMigrations = {
    R"sql(
CREATE TABLE trans_global (
  id              BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  gid             TEXT    NOT NULL UNIQUE,
  trans_type      TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  options         BYTEA   NOT NULL,
  create_time     BIGINT  NOT NULL,
  update_time     BIGINT  NOT NULL,
  finish_time     BIGINT,
  rollback_time   BIGINT,
  rollback_reason BYTEA   NOT NULL,
  next_cron_time  BIGINT,
  stuck           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trans_global_status ON trans_global (status, id);
CREATE INDEX trans_global_trans_type ON trans_global (trans_type, id);
CREATE INDEX trans_global_stuck ON trans_global (id) WHERE stuck = 1;
CREATE INDEX trans_global_finish_time ON trans_global (finish_time)
  WHERE finish_time IS NOT NULL;

CREATE TABLE trans_branch_op (
  global_id       BIGINT  NOT NULL,
  branch_id       TEXT    NOT NULL,
  op              TEXT    NOT NULL,
  seq             INTEGER NOT NULL,
  url             TEXT    NOT NULL,
  data            BYTEA   NOT NULL,
  status          TEXT    NOT NULL,
  create_time     BIGINT  NOT NULL,
  update_time     BIGINT  NOT NULL,
  attempts        INTEGER NOT NULL,
  failures        INTEGER NOT NULL,
  last_error      BYTEA   NOT NULL,
  next_retry_at   BIGINT  NOT NULL,
  failed_attempts BYTEA   NOT NULL,
  PRIMARY KEY (global_id, branch_id, op)
);
)sql",
};

// The advisory lock that serializes migrations: any constant, and the schema the tables are
// created in.
constexpr const char* kMigrationLock =
    "SELECT pg_advisory_xact_lock(74372853, hashtext(current_schema()))";

Status Failed(PgConnection& connection, int version, const Status& cause) {
  if (connection.InTransaction()) connection.Run("ROLLBACK").IgnoreError();
  return Status::Unavailable("migrating the postgresql schema to version " +
                             std::to_string(version) + ": " + cause.message());
}

}  // namespace

int LatestPgSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Result<int> ReadPgSchemaVersion(PgConnection& connection) {
  Result<PgResult> exists =
      connection.Query("SELECT to_regclass('settle_schema') IS NOT NULL");
  if (!exists) return exists.status();
  if (exists->Text(0, 0) != "t") return 0;
  Result<PgResult> version = connection.Query("SELECT version FROM settle_schema");
  if (!version) return version.status();
  if (version->rows() == 0) return 0;  // created, and nothing migrated yet
  if (version->rows() != 1) {
    return Status::Unavailable("postgresql: settle_schema has " +
                               std::to_string(version->rows()) + " rows, expected 1");
  }
  return static_cast<int>(version->Int(0, 0));
}

Status MigratePgSchema(PgConnection& connection) {
  const int latest = LatestPgSchemaVersion();
  for (;;) {
    if (Status s = connection.Run("BEGIN"); !s.ok()) return s;
    if (Status s = connection.Run(kMigrationLock); !s.ok()) return Failed(connection, 0, s);
    // Under the lock: another coordinator may have migrated while this one waited.
    Status s = connection.Run("CREATE TABLE IF NOT EXISTS settle_schema (version INTEGER NOT NULL)");
    Result<int> version = s.ok() ? ReadPgSchemaVersion(connection) : Result<int>(s);
    if (!version) return Failed(connection, 0, version.status());
    if (*version > latest) {
      connection.Run("ROLLBACK").IgnoreError();
      return Status::Unavailable("database schema version " + std::to_string(*version) +
                                 " is newer than this binary's version " +
                                 std::to_string(latest) + "; upgrade Settle to use it");
    }
    if (*version == latest) return connection.Run("COMMIT");
    const int next = *version + 1;
    s = connection.Run(kMigrations[next - 1]);
    if (s.ok() && *version == 0) s = connection.Run("INSERT INTO settle_schema VALUES (0)");
    if (s.ok()) {
      s = connection.Run("UPDATE settle_schema SET version = " + std::to_string(next));
    }
    if (s.ok()) s = connection.Run("COMMIT");
    if (!s.ok()) return Failed(connection, next, s);
  }
}

}  // namespace settle::storage
