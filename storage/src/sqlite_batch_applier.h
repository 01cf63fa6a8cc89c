#pragma once

#include <span>
#include <vector>

#include "settle/common/sqlite_connection.h"
#include "settle/common/status.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// Applies a group of callers' batches to the write connection in one transaction: the heart
// of group commit, kept apart from the writer's thread and queue so that tests can drive it
// with groups of their choosing.
//
// Thread-safety: none; it uses the connection it was given, which nothing else may use at
// the same time.
class SqliteBatchApplier {
 public:
  explicit SqliteBatchApplier(SqliteConnection& connection) : connection_(connection) {}

  struct GroupResult {
    std::vector<Status> statuses;  // one per batch, in the order given
    bool committed = false;        // false: nothing of the group is stored
  };

  // BEGIN IMMEDIATE; each batch inside its own SAVEPOINT; one COMMIT. A batch refused by a
  // precondition is rolled back to its savepoint and gets its refusal; the others are
  // committed. If BEGIN, COMMIT or any statement fails for another reason, the transaction is
  // rolled back and every batch gets Unavailable with that reason. The connection is left
  // outside any transaction, ready for the next group.
  GroupResult ApplyGroup(std::span<const WriteBatch* const> batches);

 private:
  Status ApplyBatch(const WriteBatch& batch);
  GroupResult FailGroup(std::size_t size, const Status& cause);

  SqliteConnection& connection_;
};

}  // namespace settle::storage
