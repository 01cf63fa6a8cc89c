#include "statement.h"

namespace settle::bank {

Statement::Statement(sqlite3* db, const char* sql) : db_(db) {
  if (db_ == nullptr) {
    error_ = Status::Internal("no SQLite connection for this transaction");
  } else if (sqlite3_prepare_v2(db_, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
    error_ = Status::Internal(std::string("prepare: ") + sqlite3_errmsg(db_));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int index, const std::string& text) {
  if (error_.ok() && sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                                       SQLITE_TRANSIENT) != SQLITE_OK) {
    error_ = Status::Internal(std::string("bind: ") + sqlite3_errmsg(db_));
  }
  return *this;
}

Statement& Statement::Bind(int index, std::int64_t value) {
  if (error_.ok() && sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) {
    error_ = Status::Internal(std::string("bind: ") + sqlite3_errmsg(db_));
  }
  return *this;
}

Result<bool> Statement::Step() {
  if (!error_.ok()) return error_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Busy, I/O and full-disk errors pass: the 500 they become makes the coordinator retry.
  error_ = Status::Unavailable(std::string("sqlite: ") + sqlite3_errmsg(db_));
  return error_;
}

Status Statement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row) return row.status();
    if (!*row) return Status::Ok();
  }
}

std::string Statement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text == nullptr
             ? std::string()
             : std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

}  // namespace settle::bank
