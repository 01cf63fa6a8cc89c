#include "settle/sdk/sqlite_barrier_store.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "settle/db/sqlite_pool.h"
#include "settle/sdk/sqlite_barrier_transaction.h"
#include "sqlite_barrier_schema.h"

namespace settle::sdk {

class SqliteBarrierStore::Impl {
 public:
  // Shared with the transactions, so that one that outlives the store can still give its
  // connection back.
  std::shared_ptr<db::SqlitePool> pool;
};

namespace {

Status CheckOptions(const std::string& path, const SqliteBarrierOptions& options) {
  if (path.empty()) return Status::InvalidArgument("barrier store: path is empty");
  // Each pooled connection would see a database of its own.
  if (path == ":memory:" || path.starts_with("file:")) {
    return Status::InvalidArgument("barrier store: path must name a file, not '" + path + "'");
  }
  if (options.busy_timeout_ms < 0) {
    return Status::InvalidArgument("barrier store: busy_timeout_ms must not be negative");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<SqliteBarrierStore>> SqliteBarrierStore::Open(const std::string& path,
                                                                     SqliteBarrierOptions options) {
  Status s = CheckOptions(path, options);
  if (s.ok()) s = db::CreateParentDirectory(path);
  if (!s.ok()) return s;

  auto pool = std::make_shared<db::SqlitePool>(
      path, db::SqlitePoolOptions{options.busy_timeout_ms, options.max_idle_connections});
  Result<std::unique_ptr<db::SqliteConnection>> first = pool->Acquire();
  if (!first) return first.status();
  s = PrepareBarrierSchema(**first);
  if (!s.ok()) return s;
  // The first connection, with its statements already prepared, serves the first call.
  pool->Release(std::move(*first));

  auto impl = std::make_unique<Impl>();
  impl->pool = std::move(pool);
  return std::unique_ptr<SqliteBarrierStore>(new SqliteBarrierStore(std::move(impl)));
}

SqliteBarrierStore::SqliteBarrierStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::uint64_t SqliteBarrierStore::WriteTurnsTaken() const { return impl_->pool->WriteTurnsTaken(); }

SqliteBarrierStore::~SqliteBarrierStore() = default;

Result<std::unique_ptr<BarrierTransaction>> SqliteBarrierStore::Begin() {
  Result<std::unique_ptr<SqliteBarrierTransaction>> tx =
      SqliteBarrierTransaction::Begin(impl_->pool);
  if (!tx) return tx.status();
  return std::unique_ptr<BarrierTransaction>(std::move(*tx));
}

Result<std::size_t> SqliteBarrierStore::DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) {
  Result<std::unique_ptr<SqliteBarrierTransaction>> tx =
      SqliteBarrierTransaction::Begin(impl_->pool);
  if (!tx) return tx.status();
  Result<std::size_t> deleted = (*tx)->DeleteCreatedBefore(cutoff, limit);
  if (!deleted) return deleted.status();  // the transaction rolls back as it goes
  Status s = (*tx)->Commit();
  if (!s.ok()) return s;
  return deleted;
}

sqlite3* SqliteBarrierStore::Connection(BarrierTransaction& tx) {
  auto* own = dynamic_cast<SqliteBarrierTransaction*>(&tx);
  return own != nullptr ? own->handle() : nullptr;
}

}  // namespace settle::sdk
