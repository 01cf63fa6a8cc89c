#pragma once

#include "batch_applier.h"
#include "settle/db/sqlite_connection.h"
#include "sqlite_write_ops.h"

namespace settle::storage {

// Group commit's transaction on SQLite: BEGIN IMMEDIATE takes the write lock at once.
class SqliteBatchApplier : public BatchApplier<db::SqliteConnection> {
 public:
  using GroupResult = storage::GroupResult;
  explicit SqliteBatchApplier(db::SqliteConnection& connection)
      : BatchApplier(connection, "BEGIN IMMEDIATE") {}
};

}  // namespace settle::storage
