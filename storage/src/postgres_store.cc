#include "settle/storage/postgres_store.h"

#include <utility>

#include "group_committer.h"
#include "pg_group_applier.h"
#include "pg_instance_leases.h"
#include "pg_reader.h"
#include "pg_schema.h"
#include "settle/db/pg_connection.h"
#include "settle/db/pg_pool.h"

namespace settle::storage {

namespace {

// The advisory lock an exclusive store holds: any constant, and the schema, so that stores in
// different schemas of one database (separate stores) do not exclude each other.
constexpr const char* kExclusiveLock =
    "SELECT pg_try_advisory_lock(74372854, hashtext(current_schema()))";
// Released in so many words when the store closes: closing the connection alone ends its
// server process (and the lock with it) only some moments later, and a store opened again at
// once would find the lock still held.
constexpr const char* kExclusiveUnlock =
    "SELECT pg_advisory_unlock(74372854, hashtext(current_schema()))";

// A connection that holds the exclusive lock, or Unavailable if another store holds it.
Result<std::unique_ptr<db::PgConnection>> HoldExclusively(const std::string& conninfo) {
  Result<std::unique_ptr<db::PgConnection>> holder = db::PgConnection::Open(conninfo);
  if (!holder) return holder.status();
  Result<db::PgResult> locked = (*holder)->Query(kExclusiveLock);
  if (!locked) return locked.status();
  if (locked->Text(0, 0) != "t") {
    return Status::Unavailable(
        "postgresql: another settled is using this database; running several on one "
        "database is not supported yet");
  }
  return holder;
}

}  // namespace

class PostgresStore::Impl {
 public:
  Impl(std::unique_ptr<db::PgConnection> holder, std::unique_ptr<db::PgConnection> writer,
       const std::string& conninfo, const PostgresStoreOptions& options)
      : holder_(std::move(holder)),
        writer_connection_(std::move(writer)),
        applier_(*writer_connection_),
        pool_(conninfo, options.max_idle_readers),
        reader_(pool_),
        leases_(pool_) {}

  Status StartWriter(const PostgresStoreOptions& options) {
    Result<std::unique_ptr<GroupCommitter>> committer = GroupCommitter::Start(
        [this](std::span<const WriteBatch* const> group) { return applier_.ApplyGroup(group); },
        GroupCommitOptions{options.max_batches_per_commit, options.commit_delay, options.clock});
    if (!committer) return committer.status();
    committer_ = std::move(committer).value();
    return Status::Ok();
  }

  ~Impl() {
    if (committer_ != nullptr) committer_->Shutdown();
    if (holder_ != nullptr) holder_->Query(kExclusiveUnlock).status().IgnoreError();
  }

  GroupCommitter& committer() { return *committer_; }
  const GroupCommitter& committer() const { return *committer_; }
  PgReader& reader() { return reader_; }
  PgInstanceLeases& leases() { return leases_; }

 private:
  std::unique_ptr<db::PgConnection> holder_;  // null unless exclusive; closed last
  std::unique_ptr<db::PgConnection> writer_connection_;
  PgGroupApplier applier_;
  db::PgPool pool_;
  PgReader reader_;
  PgInstanceLeases leases_;
  std::unique_ptr<GroupCommitter> committer_;  // last: stopped before what it uses goes
};

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& conninfo,
                                                           PostgresStoreOptions options) {
  std::unique_ptr<db::PgConnection> holder;
  if (options.exclusive) {
    Result<std::unique_ptr<db::PgConnection>> held = HoldExclusively(conninfo);
    if (!held) return held.status();
    holder = std::move(held).value();
  }
  Result<std::unique_ptr<db::PgConnection>> writer = db::PgConnection::Open(conninfo);
  if (!writer) return writer.status();
  if (Status s = MigratePgSchema(**writer); !s.ok()) return s;
  auto impl =
      std::make_unique<Impl>(std::move(holder), std::move(writer).value(), conninfo, options);
  if (Status s = impl->StartWriter(options); !s.ok()) return s;
  return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(impl)));
}

PostgresStore::PostgresStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PostgresStore::~PostgresStore() = default;

Status PostgresStore::Commit(const WriteBatch& batch) { return impl_->committer().Commit(batch); }

void PostgresStore::CommitAsync(WriteBatch batch, std::function<void(Status)> done) {
  impl_->committer().CommitAsync(std::move(batch), std::move(done));
}

Result<std::optional<Transaction>> PostgresStore::Load(const std::string& gid) {
  return impl_->reader().Load(gid);
}

Result<ListPage> PostgresStore::List(const ListQuery& query) { return impl_->reader().List(query); }

Result<std::vector<DueEntry>> PostgresStore::ListUnfinished() {
  return impl_->reader().ListUnfinished();
}

Result<std::vector<UnfinishedCount>> PostgresStore::CountUnfinished() {
  return impl_->reader().CountUnfinished();
}

Result<std::vector<CreatorUsage>> PostgresStore::UnfinishedUsage(
    const std::optional<std::string>& creator) {
  return impl_->reader().UnfinishedUsage(creator);
}

Result<std::vector<std::string>> PostgresStore::ListFinishedBefore(TimePoint cutoff,
                                                                   std::size_t limit) {
  return impl_->reader().ListFinishedBefore(cutoff, limit);
}

Result<std::vector<UndoneRollback>> PostgresStore::ListUndoneRollbacks(TimePoint finished_since,
                                                                       std::int64_t after_id,
                                                                       std::size_t limit) {
  return impl_->reader().ListUndoneRollbacks(finished_since, after_id, limit);
}

Result<std::vector<Subscriber>> PostgresStore::Subscribers(const std::string& topic) {
  return impl_->reader().Subscribers(topic);
}

Result<std::vector<Topic>> PostgresStore::ListTopics() { return impl_->reader().ListTopics(); }

Result<AuditPage> PostgresStore::ListAudit(const AuditQuery& query) {
  return impl_->reader().ListAudit(query);
}

Result<std::optional<BulkJob>> PostgresStore::LoadJob(const std::string& id) {
  return impl_->reader().LoadJob(id);
}

Result<std::vector<BulkJob>> PostgresStore::ListJobs(std::size_t limit, bool running_only) {
  return impl_->reader().ListJobs(limit, running_only);
}

StoreStats PostgresStore::Stats() const { return impl_->committer().Stats(); }

InstanceLeases& PostgresStore::leases() { return impl_->leases(); }

int PostgresStore::SchemaVersion() { return LatestPgSchemaVersion(); }

bool IsPostgresLocation(const std::string& location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

}  // namespace settle::storage
