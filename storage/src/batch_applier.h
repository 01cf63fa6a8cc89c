#pragma once

#include <span>
#include <string>
#include <utility>

#include "group_committer.h"
#include "settle/core/status.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// True for the statuses of ApplyWriteOp that refuse a batch without failing the transaction:
// a precondition that does not hold (ResourceExhausted: a transaction's branch-row limit), or
// a record that cannot be stored.
inline bool IsRefusal(const Status& status) {
  switch (status.code()) {
    case StatusCode::kAlreadyExists:
    case StatusCode::kNotFound:
    case StatusCode::kConflict:
    case StatusCode::kInvalidArgument:
    case StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

// Applies a group of callers' batches to a write connection in one transaction: the heart of
// group commit, kept apart from the committer's thread and queue so that tests can drive it
// with groups of their choosing. The same for every SQL database: `Connection` has
// `Status Run(std::string_view sql)` and `bool InTransaction() const`, and
// `ApplyWriteOp(Connection&, const WriteOp&)` applies one operation (its SQL dialect).
//
// Lifetime: `connection` must outlive it. Thread-safety: none; it uses the connection it was
// given, which nothing else may use at the same time.
template <typename Connection>
class BatchApplier {
 public:
  // `begin` starts the group's transaction: BEGIN IMMEDIATE in SQLite, so that the write lock
  // is taken at once.
  BatchApplier(Connection& connection, std::string begin)
      : connection_(connection), begin_(std::move(begin)) {}

  // `begin`; each batch inside its own SAVEPOINT; one COMMIT. A batch refused by a
  // precondition is rolled back to its savepoint and gets its refusal; the others are
  // committed. If BEGIN, COMMIT or any statement fails for another reason, the transaction is
  // rolled back and every batch gets Unavailable with that reason. The connection is left
  // outside any transaction, ready for the next group.
  GroupResult ApplyGroup(std::span<const WriteBatch* const> batches) {
    // A previous group whose ROLLBACK failed left its transaction open: end it first.
    if (connection_.InTransaction()) connection_.Run("ROLLBACK").IgnoreError();
    if (Status s = connection_.Run(begin_); !s.ok()) return FailGroup(batches.size(), s);
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

 private:
  Status ApplyBatch(const WriteBatch& batch) {
    for (const WriteOp& op : batch.ops()) {
      if (Status s = ApplyWriteOp(connection_, op); !s.ok()) return s;
    }
    return Status::Ok();
  }

  GroupResult FailGroup(std::size_t size, const Status& cause) {
    // Some errors (a full disk, a lost connection) end the transaction by themselves;
    // rolling back again would fail with "no transaction is active".
    if (connection_.InTransaction()) {
      // If this fails too, the next group's BEGIN retries the rollback.
      connection_.Run("ROLLBACK").IgnoreError();
    }
    GroupResult result;
    result.statuses.assign(size, Status::Unavailable(cause.message()));
    return result;
  }

  Connection& connection_;
  const std::string begin_;
};

}  // namespace settle::storage
