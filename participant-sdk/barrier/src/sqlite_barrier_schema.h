#pragma once

#include <string_view>

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"

namespace settle::sdk {

// The `barrier` table of docs/protocol.md §6.3 in the participant's SQLite file, and the statements
// on it. The table shares the file with the participant's own tables, which may version
// themselves with PRAGMA user_version: the barrier leaves user_version alone and is created
// with CREATE TABLE IF NOT EXISTS instead. create_time is in unix milliseconds.

inline constexpr std::string_view kInsertBarrierRowSql =
    "INSERT INTO barrier(trans_type, gid, branch_id, op, barrier_id, reason, create_time) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
    "ON CONFLICT(gid, branch_id, op, barrier_id) DO NOTHING";

inline constexpr std::string_view kSelectBarrierReasonSql =
    "SELECT reason FROM barrier WHERE gid = ?1 AND branch_id = ?2 AND op = ?3 AND barrier_id = ?4";

inline constexpr std::string_view kDeleteBarrierRowsCreatedBeforeSql =
    "DELETE FROM barrier WHERE rowid IN "
    "(SELECT rowid FROM barrier WHERE create_time < ?1 LIMIT ?2)";

// Switches the file to WAL and creates the barrier table and its create_time index if they
// are missing. InvalidArgument if the file has a `barrier` table that is not Settle's (a
// column or the unique key is missing); Unavailable if the file cannot be set up.
Status PrepareBarrierSchema(db::SqliteConnection& connection);

}  // namespace settle::sdk
