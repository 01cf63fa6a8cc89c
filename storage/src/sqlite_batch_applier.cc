#include "sqlite_batch_applier.h"

#include "sqlite_write_ops.h"

namespace settle::storage {

SqliteBatchApplier::GroupResult SqliteBatchApplier::ApplyGroup(
    std::span<const WriteBatch* const> batches) {
  // A previous group whose ROLLBACK failed left its transaction open: end it first.
  if (connection_.InTransaction()) connection_.Run("ROLLBACK").IgnoreError();
  if (Status s = connection_.Run("BEGIN IMMEDIATE"); !s.ok()) {
    return FailGroup(batches.size(), s);
  }
  GroupResult result;
  result.statuses.reserve(batches.size());
  for (const WriteBatch* batch : batches) {
    if (Status s = connection_.Run("SAVEPOINT batch"); !s.ok()) {
      return FailGroup(batches.size(), s);
    }
    Status status = ApplyBatch(*batch);
    if (!status.ok() && !IsRefusal(status)) return FailGroup(batches.size(), status);
    if (!status.ok()) {
      if (Status s = connection_.Run("ROLLBACK TO batch"); !s.ok()) {
        return FailGroup(batches.size(), s);
      }
    }
    if (Status s = connection_.Run("RELEASE batch"); !s.ok()) {
      return FailGroup(batches.size(), s);
    }
    result.statuses.push_back(std::move(status));
  }
  if (Status s = connection_.Run("COMMIT"); !s.ok()) return FailGroup(batches.size(), s);
  result.committed = true;
  return result;
}

Status SqliteBatchApplier::ApplyBatch(const WriteBatch& batch) {
  for (const WriteOp& op : batch.ops()) {
    if (Status s = ApplyWriteOp(connection_, op); !s.ok()) return s;
  }
  return Status::Ok();
}

SqliteBatchApplier::GroupResult SqliteBatchApplier::FailGroup(std::size_t size,
                                                              const Status& cause) {
  // Some errors (a full disk, an I/O error) make SQLite roll back by itself; rolling back
  // again would fail with "no transaction is active".
  if (connection_.InTransaction()) {
    // If this fails too, the next group's BEGIN retries the rollback.
    connection_.Run("ROLLBACK").IgnoreError();
  }
  GroupResult result;
  result.statuses.assign(size, Status::Unavailable(cause.message()));
  return result;
}

}  // namespace settle::storage
