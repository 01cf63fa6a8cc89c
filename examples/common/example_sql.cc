#include "example_sql.h"

#include <memory>
#include <utility>

namespace settle::examples {
namespace {

using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

Status Failed(sqlite3* db) {
  // The primary code, whether or not the connection reports extended ones.
  const int code = sqlite3_extended_errcode(db) & 0xff;
  return code == SQLITE_CONSTRAINT ? Status::Conflict(sqlite3_errmsg(db))
                                   : Status::Unavailable(sqlite3_errmsg(db));
}

Result<Statement> Prepare(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) return Failed(db);
  Statement statement(raw, &sqlite3_finalize);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (const auto* number = std::get_if<std::int64_t>(&args[i])) {
      sqlite3_bind_int64(raw, index, *number);
    } else {
      sqlite3_bind_text(raw, index, std::get<std::string>(args[i]).c_str(), -1, SQLITE_TRANSIENT);
    }
  }
  return statement;
}

}  // namespace

Result<int> Exec(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  auto statement = Prepare(db, sql, args);
  if (!statement) return statement.status();
  if (sqlite3_step(statement->get()) != SQLITE_DONE) return Failed(db);
  return sqlite3_changes(db);
}

Status Run(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  auto changed = Exec(db, sql, args);
  return changed ? Status::Ok() : changed.status();
}

Result<std::vector<SqlRow>> Query(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  auto statement = Prepare(db, sql, args);
  if (!statement) return statement.status();
  std::vector<SqlRow> rows;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(statement->get())) == SQLITE_ROW) {
    SqlRow& row = rows.emplace_back();
    for (int column = 0; column < sqlite3_column_count(statement->get()); ++column) {
      const auto* text =
          reinterpret_cast<const char*>(sqlite3_column_text(statement->get(), column));
      row.emplace_back(text != nullptr ? text : "");
    }
  }
  if (rc != SQLITE_DONE) return Failed(db);
  return rows;
}

Result<std::optional<SqlRow>> QueryRow(sqlite3* db, const char* sql,
                                       const std::vector<SqlValue>& args) {
  auto rows = Query(db, sql, args);
  if (!rows) return rows.status();
  if (rows->empty()) return std::optional<SqlRow>();
  return std::optional<SqlRow>(std::move(rows->front()));
}

Status Write(sdk::SqliteBarrierStore& store, const std::function<Status(sqlite3*)>& work) {
  auto tx = store.Begin();
  if (!tx) return tx.status();
  if (Status s = work(sdk::SqliteBarrierStore::Connection(**tx)); !s.ok()) return s;
  return (*tx)->Commit();
}

}  // namespace settle::examples
