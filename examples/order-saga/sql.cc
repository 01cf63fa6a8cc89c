#include "sql.h"

#include <memory>

namespace settle::order_saga {
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

Result<int> Exec(sqlite3* db, const char* sql, const std::vector<SqlValue>& args) {
  auto stmt = Prepare(db, sql, args);
  if (!stmt) return stmt.status();
  if (sqlite3_step(stmt->get()) != SQLITE_DONE) return Status::Unavailable(sqlite3_errmsg(db));
  return sqlite3_changes(db);
}

Result<std::optional<std::string>> QueryText(sqlite3* db, const char* sql,
                                             const std::vector<SqlValue>& args) {
  auto stmt = Prepare(db, sql, args);
  if (!stmt) return stmt.status();
  const int rc = sqlite3_step(stmt->get());
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return Status::Unavailable(sqlite3_errmsg(db));
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt->get(), 0));
  return std::optional<std::string>(text ? text : "");
}

}  // namespace settle::order_saga
