#include "settle/sdk/postgres_barrier_store.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "settle/db/pg_pool.h"
#include "settle/sdk/postgres_barrier_schema.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kDeleteCreatedBeforeSql =
    "DELETE FROM barrier WHERE ctid IN "
    "(SELECT ctid FROM barrier WHERE create_time < $1::bigint LIMIT $2::bigint)";

class PostgresBarrierTransaction final : public BarrierTransaction {
 public:
  explicit PostgresBarrierTransaction(std::unique_ptr<db::PgPool::Lease> lease)
      : lease_(std::move(lease)) {}
  // The lease rolls back whatever is still open when it goes back to the pool.
  ~PostgresBarrierTransaction() override = default;

  Result<bool> InsertIfAbsent(const BarrierRow& row) override {
    if (Status s = CheckOpen("inserting a barrier row"); !s.ok()) return s;
    Result<db::PgResult> inserted =
        connection().Query(kInsertPostgresBarrierRowSql, db::PgParams()
                                                             .Text(row.trans_type)
                                                             .Text(row.gid)
                                                             .Text(row.branch_id)
                                                             .Text(row.op)
                                                             .Text(row.barrier_id)
                                                             .Text(row.reason)
                                                             .Int(ToUnixMillis(row.create_time)));
    if (!inserted) return inserted.status();
    return inserted->affected() > 0;
  }

  Result<std::optional<std::string>> ReasonOf(const std::string& gid, const std::string& branch_id,
                                              const std::string& op,
                                              const std::string& barrier_id) override {
    if (Status s = CheckOpen("reading a barrier row"); !s.ok()) return s;
    Result<db::PgResult> rows =
        connection().Query(kSelectPostgresBarrierReasonSql,
                           db::PgParams().Text(gid).Text(branch_id).Text(op).Text(barrier_id));
    if (!rows) return rows.status();
    if (rows->rows() == 0) return std::optional<std::string>();
    return std::optional<std::string>(rows->Text(0, 0));
  }

  Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) {
    if (Status s = CheckOpen("deleting barrier rows"); !s.ok()) return s;
    const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
    Result<db::PgResult> deleted = connection().Query(
        kDeleteCreatedBeforeSql, db::PgParams()
                                     .Int(ToUnixMillis(cutoff))
                                     .Int(static_cast<std::int64_t>(std::min(limit, max))));
    if (!deleted) return deleted.status();
    return static_cast<std::size_t>(deleted->affected());
  }

  Status Commit() override {
    if (Status s = CheckOpen("commit"); !s.ok()) {
      Rollback();
      return s;
    }
    // COMMIT of a transaction in which a statement failed rolls back and is not an error:
    // look first.
    if (connection().InFailedTransaction()) {
      Rollback();
      return Status::Unavailable(
          "committing a barrier transaction: a statement in it failed; rolled back");
    }
    open_ = false;
    if (Status s = connection().Run("COMMIT"); !s.ok()) {
      return Status(s.code(), "committing a barrier transaction: " + s.message());
    }
    return Status::Ok();
  }

  void Rollback() override {
    if (!open_) return;
    open_ = false;
    if (connection().InTransaction()) connection().Run("ROLLBACK").IgnoreError();
  }

  db::PgConnection& connection() { return **lease_; }

 private:
  Status CheckOpen(std::string_view operation) {
    if (!open_) {
      return Status::Internal("barrier transaction: " + std::string(operation) + " after its end");
    }
    if (!connection().InTransaction()) {
      return Status::Unavailable("barrier transaction: " + std::string(operation) +
                                 ": the connection to PostgreSQL was lost");
    }
    return Status::Ok();
  }

  std::unique_ptr<db::PgPool::Lease> lease_;
  bool open_ = true;
};

}  // namespace

class PostgresBarrierStore::Impl {
 public:
  Impl(const std::string& conninfo, const PostgresBarrierOptions& options)
      : pool_(conninfo, options.max_idle_connections) {}
  db::PgPool& pool() { return pool_; }

 private:
  db::PgPool pool_;
};

Result<std::unique_ptr<PostgresBarrierStore>> PostgresBarrierStore::Open(
    const std::string& conninfo, PostgresBarrierOptions options) {
  auto impl = std::make_unique<Impl>(conninfo, options);
  Result<std::unique_ptr<db::PgPool::Lease>> lease = impl->pool().Acquire();
  if (!lease) return lease.status();
  if (Status s = (**lease)->Run(kCreatePostgresBarrierSchemaSql); !s.ok()) {
    return Status(s.code(), "creating the barrier table: " + s.message());
  }
  lease->reset();
  return std::unique_ptr<PostgresBarrierStore>(new PostgresBarrierStore(std::move(impl)));
}

PostgresBarrierStore::PostgresBarrierStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PostgresBarrierStore::~PostgresBarrierStore() = default;

Result<std::unique_ptr<BarrierTransaction>> PostgresBarrierStore::Begin() {
  Result<std::unique_ptr<db::PgPool::Lease>> lease = impl_->pool().Acquire();
  if (!lease) return lease.status();
  // A pooled connection may have died while idle: BEGIN notices, and the retry connects again.
  Status s = (**lease)->Run("BEGIN; SET LOCAL synchronous_commit = on");
  if (!s.ok()) s = (**lease)->Run("BEGIN; SET LOCAL synchronous_commit = on");
  if (!s.ok()) return Status(s.code(), "beginning a barrier transaction: " + s.message());
  return std::unique_ptr<BarrierTransaction>(
      new PostgresBarrierTransaction(std::move(lease).value()));
}

Result<std::size_t> PostgresBarrierStore::DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) {
  Result<std::unique_ptr<BarrierTransaction>> tx = Begin();
  if (!tx) return tx.status();
  auto& pg = static_cast<PostgresBarrierTransaction&>(**tx);
  Result<std::size_t> deleted = pg.DeleteCreatedBefore(cutoff, limit);
  if (!deleted) return deleted.status();
  if (Status s = pg.Commit(); !s.ok()) return s;
  return deleted;
}

db::PgConnection* PostgresBarrierStore::Connection(BarrierTransaction& tx) {
  auto* pg = dynamic_cast<PostgresBarrierTransaction*>(&tx);
  return pg != nullptr ? &pg->connection() : nullptr;
}

}  // namespace settle::sdk
