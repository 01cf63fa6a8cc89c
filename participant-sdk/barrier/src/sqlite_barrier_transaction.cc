#include "settle/sdk/sqlite_barrier_transaction.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sqlite_barrier_schema.h"

namespace settle::sdk {

Result<std::unique_ptr<SqliteBarrierTransaction>> SqliteBarrierTransaction::Begin(
    std::shared_ptr<db::SqlitePool> pool) {
  if (!pool->EnterWrites()) {
    return Status::Unavailable("beginning a barrier transaction: database is locked");
  }
  Result<std::unique_ptr<db::SqliteConnection>> connection = pool->Acquire();
  if (!connection) {
    pool->LeaveWrites();
    return connection.status();
  }
  // IMMEDIATE takes the write lock now, waiting up to busy_timeout for it: a deferred BEGIN
  // would let two racing calls both read "no row" and only one of them fail later.
  Status s = (*connection)->Run("BEGIN IMMEDIATE");
  if (!s.ok()) {
    pool->Release(std::move(*connection));
    pool->LeaveWrites();
    return Status(s.code(), "beginning a barrier transaction: " + s.message());
  }
  return std::unique_ptr<SqliteBarrierTransaction>(
      new SqliteBarrierTransaction(std::move(pool), std::move(*connection)));
}

SqliteBarrierTransaction::~SqliteBarrierTransaction() {
  Rollback();
  pool_->Release(std::move(connection_));
}

Status SqliteBarrierTransaction::CheckOpen(std::string_view operation) const {
  if (!open_) {
    return Status::Internal("barrier transaction: " + std::string(operation) + " after its end");
  }
  if (!connection_->InTransaction()) {
    return Status::Unavailable("barrier transaction: " + std::string(operation) +
                               ": SQLite already rolled the transaction back");
  }
  return Status::Ok();
}

Result<bool> SqliteBarrierTransaction::InsertIfAbsent(const BarrierRow& row) {
  Status s = CheckOpen("inserting a barrier row");
  if (!s.ok()) return s;
  Result<db::SqliteStatement> insert = connection_->Prepare(kInsertBarrierRowSql);
  if (!insert) return insert.status();
  s = insert->BindText(1, row.trans_type)
          .BindText(2, row.gid)
          .BindText(3, row.branch_id)
          .BindText(4, row.op)
          .BindText(5, row.barrier_id)
          .BindText(6, row.reason)
          .BindInt64(7, ToUnixMillis(row.create_time))
          .Run();
  if (!s.ok()) return s;
  return connection_->Changes() > 0;
}

Result<std::optional<std::string>> SqliteBarrierTransaction::ReasonOf(
    const std::string& gid, const std::string& branch_id, const std::string& op,
    const std::string& barrier_id) {
  Status s = CheckOpen("reading a barrier row");
  if (!s.ok()) return s;
  Result<db::SqliteStatement> select = connection_->Prepare(kSelectBarrierReasonSql);
  if (!select) return select.status();
  Result<bool> row = select->BindText(1, gid)
                         .BindText(2, branch_id)
                         .BindText(3, op)
                         .BindText(4, barrier_id)
                         .Step();
  if (!row) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(select->ColumnBytes(0));
}

Result<std::size_t> SqliteBarrierTransaction::DeleteCreatedBefore(TimePoint cutoff,
                                                                  std::size_t limit) {
  Status s = CheckOpen("deleting barrier rows");
  if (!s.ok()) return s;
  Result<db::SqliteStatement> del = connection_->Prepare(kDeleteBarrierRowsCreatedBeforeSql);
  if (!del) return del.status();
  const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  s = del->BindInt64(1, ToUnixMillis(cutoff))
          .BindInt64(2, static_cast<std::int64_t>(std::min(limit, max)))
          .Run();
  if (!s.ok()) return s;
  return static_cast<std::size_t>(connection_->Changes());
}

Status SqliteBarrierTransaction::Commit() {
  Status s = CheckOpen("commit");
  if (!s.ok()) {
    Rollback();
    return s;
  }
  s = connection_->Run("COMMIT");
  if (!s.ok()) {
    Rollback();
    return Status(s.code(), "committing a barrier transaction: " + s.message());
  }
  End();
  return Status::Ok();
}

void SqliteBarrierTransaction::Rollback() {
  if (!open_) return;
  // A connection that cannot roll back would carry this transaction into the next borrower.
  if (connection_->InTransaction() &&
      (!connection_->Run("ROLLBACK").ok() || connection_->InTransaction())) {
    connection_->MarkBroken();
  }
  End();
}

void SqliteBarrierTransaction::End() {
  open_ = false;
  pool_->LeaveWrites();
}

}  // namespace settle::sdk
