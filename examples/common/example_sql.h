#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "settle/core/status.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::examples {

// The SQLite statements of the examples' services (examples/common), with ?1, ?2, ... bound to
// `args` in order.
using SqlValue = std::variant<std::int64_t, std::string>;
using SqlRow = std::vector<std::string>;  // each column as text

// Runs one statement; returns how many rows it changed. Conflict when it breaks a constraint,
// Unavailable on any other SQLite error.
Result<int> Exec(sqlite3* db, const char* sql, const std::vector<SqlValue>& args = {});

// Runs one statement for its effect alone: Exec without the count.
Status Run(sqlite3* db, const char* sql, const std::vector<SqlValue>& args = {});

// Every row of a query, in the order SQLite returns them.
Result<std::vector<SqlRow>> Query(sqlite3* db, const char* sql,
                                  const std::vector<SqlValue>& args = {});

// The first row of a query; nullopt when there is none.
Result<std::optional<SqlRow>> QueryRow(sqlite3* db, const char* sql,
                                       const std::vector<SqlValue>& args = {});

// Runs `work` in a transaction of `store` and commits it if `work` succeeded.
Status Write(sdk::SqliteBarrierStore& store, const std::function<Status(sqlite3*)>& work);

// Runs `read` in a transaction of `store` that is rolled back afterwards.
template <typename T>
Result<T> Read(sdk::SqliteBarrierStore& store, const std::function<Result<T>(sqlite3*)>& read) {
  auto tx = store.Begin();
  if (!tx) return tx.status();
  return read(sdk::SqliteBarrierStore::Connection(**tx));
}

}  // namespace settle::examples
