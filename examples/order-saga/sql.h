#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "settle/core/status.h"

namespace settle::order_saga {

// The few SQLite calls the services make, with ?1, ?2, ... bound to `args` in order.
using SqlValue = std::variant<std::int64_t, std::string>;

// Runs one statement; returns how many rows it changed. Unavailable on an SQLite error: the
// branch answers 500 and the coordinator retries it.
Result<int> Exec(sqlite3* db, const char* sql, const std::vector<SqlValue>& args = {});

// The first column of the first row as text; nullopt when there is no row.
Result<std::optional<std::string>> QueryText(sqlite3* db, const char* sql,
                                             const std::vector<SqlValue>& args = {});

}  // namespace settle::order_saga
