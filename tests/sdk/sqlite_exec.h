#pragma once

#include <sqlite3.h>

#include <string>

#include "settle/core/status.h"

namespace settle::sdk::test {

// Runs `sql` (one or more statements, no results) on `db`; Internal with SQLite's message when
// it fails. For tests that set up or write a participant's own tables.
inline Status ExecSql(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) == SQLITE_OK) return Status::Ok();
  Status s = Status::Internal(error != nullptr ? error : "sqlite3_exec failed");
  sqlite3_free(error);
  return s;
}

}  // namespace settle::sdk::test
