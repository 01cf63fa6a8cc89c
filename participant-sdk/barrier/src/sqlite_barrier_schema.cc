#include "sqlite_barrier_schema.h"

#include <string>

namespace settle::sdk {
namespace {

constexpr const char* kCreateSchemaSql = R"sql(
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS barrier (
  trans_type  TEXT    NOT NULL,
  gid         TEXT    NOT NULL,
  branch_id   TEXT    NOT NULL,
  op          TEXT    NOT NULL,
  barrier_id  TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  create_time INTEGER NOT NULL,
  PRIMARY KEY (gid, branch_id, op, barrier_id)
);
CREATE INDEX IF NOT EXISTS barrier_create_time ON barrier(create_time);
COMMIT;
)sql";

Status SetWal(db::SqliteConnection& connection) {
  Result<db::SqliteStatement> pragma = connection.Prepare("PRAGMA journal_mode=WAL");
  if (!pragma) return pragma.status();
  Result<bool> row = pragma->Step();
  if (!row) return row.status();
  const std::string mode = *row ? pragma->ColumnBytes(0) : "";
  if (mode != "wal") {
    return Status::Unavailable("sqlite: the barrier file cannot use WAL (journal_mode is '" + mode +
                               "')");
  }
  return Status::Ok();
}

Status NotSettles(const Status& why) {
  return Status::InvalidArgument("the file's barrier table is not a Settle barrier table: " +
                                 why.message());
}

}  // namespace

Status PrepareBarrierSchema(db::SqliteConnection& connection) {
  Status s = SetWal(connection);
  if (!s.ok()) return s;
  s = connection.Exec(kCreateSchemaSql);
  if (!s.ok()) {
    // SQLITE_ERROR here is the index meeting a foreign table without create_time.
    const bool foreign_table = (sqlite3_errcode(connection.handle()) & 0xff) == SQLITE_ERROR;
    if (connection.InTransaction()) connection.Exec("ROLLBACK").IgnoreError();
    if (foreign_table) return NotSettles(s);
    return s;
  }
  // An older or foreign `barrier` table survives CREATE TABLE IF NOT EXISTS: preparing the
  // statements the store runs finds a missing column or unique key now, not on the first call.
  for (std::string_view sql :
       {std::string_view("SELECT trans_type, gid, branch_id, op, "
                         "barrier_id, reason, create_time FROM barrier"),
        kInsertBarrierRowSql, kSelectBarrierReasonSql, kDeleteBarrierRowsCreatedBeforeSql}) {
    Result<db::SqliteStatement> stmt = connection.Prepare(sql);
    if (!stmt) {
      if ((sqlite3_errcode(connection.handle()) & 0xff) != SQLITE_ERROR) return stmt.status();
      return NotSettles(stmt.status());
    }
  }
  return Status::Ok();
}

}  // namespace settle::sdk
