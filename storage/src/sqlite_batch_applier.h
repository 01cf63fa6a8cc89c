#pragma once

#include "batch_applier.h"
#include "settle/db/sqlite_connection.h"
#include "sqlite_write_ops.h"

namespace settle::storage {

// Group commit's transaction on SQLite: BEGIN IMMEDIATE takes the write lock at once.
//
// Lifetime: `connection` must outlive it. Not thread-safe: only the store's writer thread uses
// it, as it does the connection.
class SqliteBatchApplier : public BatchApplier<db::SqliteConnection> {
 public:
  using GroupResult = storage::GroupResult;
  explicit SqliteBatchApplier(db::SqliteConnection& connection)
      : BatchApplier(connection, "BEGIN IMMEDIATE") {}
};

}  // namespace settle::storage
