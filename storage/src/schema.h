#pragma once

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"

namespace settle::storage {

// The schema version this binary writes: the number of migrations it knows.
int LatestSchemaVersion();

// The file's PRAGMA user_version (0 for a new, empty file). Unavailable if the file cannot be
// read, e.g. because it is not an SQLite database.
Result<int> ReadSchemaVersion(db::SqliteConnection& connection);

// Applies, in order, every migration newer than the file's version, each in its own
// transaction together with its PRAGMA user_version bump. Unavailable, naming both versions,
// if the file is newer than LatestSchemaVersion(); Unavailable if a migration fails (the file
// then stays at the last version that committed).
Status MigrateSchema(db::SqliteConnection& connection);

// The same, stopping at `target_version` (1..LatestSchemaVersion()): tests build files as
// older binaries wrote them. InvalidArgument for a version this binary does not know.
Status MigrateSchema(db::SqliteConnection& connection, int target_version);

}  // namespace settle::storage
