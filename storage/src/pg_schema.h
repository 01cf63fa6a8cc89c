#pragma once

#include "settle/core/status.h"
#include "settle/db/pg_connection.h"

namespace settle::storage {

// The PostgreSQL schema version this binary writes: the number of migrations it knows.
int LatestPgSchemaVersion();

// The database's schema version (0 for a database Settle has not used yet).
Result<int> ReadPgSchemaVersion(db::PgConnection& connection);

// Applies every migration newer than the database's version, each in its own transaction with
// its version bump. Several coordinators may start at once: an advisory lock makes them take
// turns, and each sees what the ones before it did. Unavailable, naming both versions, if the
// database is newer than this binary; Unavailable if a migration fails.
Status MigratePgSchema(db::PgConnection& connection);

// The same, stopping at `target_version` (1..LatestPgSchemaVersion()): tests build databases
// as older binaries left them. InvalidArgument for a version this binary does not know.
Status MigratePgSchema(db::PgConnection& connection, int target_version);

}  // namespace settle::storage
