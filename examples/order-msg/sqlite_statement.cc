#include "sqlite_statement.h"

#include <memory>

namespace settle::order_msg {
namespace {

using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

Result<Statement> Prepare(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
    return Status::Unavailable(sqlite3_errmsg(db));
  }
  Statement stmt(raw, &sqlite3_finalize);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (const auto* number = std::get_if<std::int64_t>(&args[i])) {
      sqlite3_bind_int64(raw, index, *number);
    } else {
      sqlite3_bind_text(raw, index, std::get<std::string>(args[i]).c_str(), -1, SQLITE_TRANSIENT);
    }
  }
  return stmt;
}

}  // namespace

Status Exec(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  auto stmt = Prepare(db, sql, args);
  if (!stmt) return stmt.status();
  const int rc = sqlite3_step(stmt->get());
  if (rc == SQLITE_DONE) return Status::Ok();
  if ((rc & 0xff) == SQLITE_CONSTRAINT) return Status::Conflict(sqlite3_errmsg(db));
  return Status::Unavailable(sqlite3_errmsg(db));
}

Result<std::optional<std::vector<std::string>>> QueryRow(sqlite3* db, const char* sql,
                                                         const std::vector<SqlValue>& args) {
  auto stmt = Prepare(db, sql, args);
  if (!stmt) return stmt.status();
  const int rc = sqlite3_step(stmt->get());
  if (rc == SQLITE_DONE) return std::optional<std::vector<std::string>>();
  if (rc != SQLITE_ROW) return Status::Unavailable(sqlite3_errmsg(db));
  std::vector<std::string> row;
  for (int i = 0; i < sqlite3_column_count(stmt->get()); ++i) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt->get(), i));
    row.emplace_back(text ? text : "");
  }
  return std::optional<std::vector<std::string>>(std::move(row));
}

}  // namespace settle::order_msg
