#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "settle/core/status.h"

namespace settle::order_msg {

// The few SQLite calls the two services make, with ?1, ?2, ... bound to `args` in order.
using SqlValue = std::variant<std::int64_t, std::string>;

// Runs one statement. Conflict when it breaks a constraint (an order placed twice), Unavailable
// on any other SQLite error.
Status Exec(sqlite3* db, const char* sql, const std::vector<SqlValue>& args = {});

// The columns of the first row as text; nullopt when there is no row.
Result<std::optional<std::vector<std::string>>> QueryRow(sqlite3* db, const char* sql,
                                                         const std::vector<SqlValue>& args = {});

}  // namespace settle::order_msg
