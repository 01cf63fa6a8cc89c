#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "settle/core/status.h"

namespace settle::bank {

// One prepared SQLite statement with bound parameters, finalized on destruction. A prepare or
// bind error is remembered and reported by Step()/Run(), so that binding reads as one chain.
// Bound text is copied (SQLITE_TRANSIENT). Not thread-safe.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameter indexes are 1-based, as in SQLite.
  Statement& Bind(int index, const std::string& text);
  Statement& Bind(int index, std::int64_t value);

  // true: a row is available; false: done. Unavailable for SQLite errors (busy, I/O), Internal
  // for a statement that did not prepare (a bug).
  Result<bool> Step();
  // Steps until done, ignoring rows.
  Status Run();

  // Valid after Step() returned true.
  std::int64_t Int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::string Text(int column) const;

  // Rows changed by this statement, once it has run.
  int Changes() const { return sqlite3_changes(db_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  Status error_;
};

}  // namespace settle::bank
