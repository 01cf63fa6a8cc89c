#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "settle/db/sqlite_connection.h"
#include "settle/db/sqlite_pool.h"
#include "settle/sdk/barrier_store.h"

namespace settle::sdk {

// A SqliteBarrierStore transaction: the process's write turn, then BEGIN IMMEDIATE on a
// connection borrowed from the pool, so that it holds the file's write lock from its first
// statement and racing transactions run one after the other (the later one sees the earlier
// one's rows). Destroying it rolls
// back if it is still open and gives the connection back to the pool.
//
// Not for business code (it sees a BarrierTransaction): public for SqliteIdempotencyStore, in
// the idempotency room, which writes its keys in the same transaction on connection().
class SqliteBarrierTransaction final : public BarrierTransaction {
 public:
  // Unavailable if no connection can be opened or the write lock is not obtained within the
  // busy timeout.
  static Result<std::unique_ptr<SqliteBarrierTransaction>> Begin(
      std::shared_ptr<db::SqlitePool> pool);
  ~SqliteBarrierTransaction() override;

  Result<bool> InsertIfAbsent(const BarrierRow& row) override;
  Result<std::optional<std::string>> ReasonOf(const std::string& gid, const std::string& branch_id,
                                              const std::string& op,
                                              const std::string& barrier_id) override;
  // On failure the transaction is rolled back.
  Status Commit() override;
  void Rollback() override;

  // Deletes at most `limit` rows created before `cutoff`; how many it deleted.
  Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit);

  // The connection, for the business code's own statements; valid while this object lives.
  sqlite3* handle() const { return connection_->handle(); }
  // The same connection with its statement cache, for the SDK's other tables (the
  // idempotency keys) in this transaction.
  db::SqliteConnection& connection() const { return *connection_; }

 private:
  SqliteBarrierTransaction(std::shared_ptr<db::SqlitePool> pool,
                           std::unique_ptr<db::SqliteConnection> connection)
      : pool_(std::move(pool)), connection_(std::move(connection)) {}

  // OK while BEGIN has not been followed by COMMIT or ROLLBACK, here or by SQLite itself
  // (which rolls back on some errors: a statement run then would commit on its own).
  Status CheckOpen(std::string_view operation) const;
  // Marks the transaction ended and gives the process's write turn to the next one.
  void End();

  std::shared_ptr<db::SqlitePool> pool_;
  std::unique_ptr<db::SqliteConnection> connection_;
  bool open_ = true;
};

}  // namespace settle::sdk
