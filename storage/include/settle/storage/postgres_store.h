#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/storage/instance_leases.h"
#include "settle/storage/store.h"

namespace settle::storage {

struct PostgresStoreOptions {
  // Most callers' batches folded into one PostgreSQL transaction (one WAL flush).
  std::size_t max_batches_per_commit = 1024;
  // See SqliteStoreOptions::commit_delay; off by default.
  std::chrono::microseconds commit_delay{0};
  // Read connections kept open between reads (more are opened while more readers wait).
  std::size_t max_idle_readers = 16;
  // Refuse to open a database that another store holds open this way. For a coordinator that
  // drives every unfinished transaction it finds without leases (a single instance, tools,
  // tests): two of them on one database would call the same branches twice. settled opens
  // its store with exclusive = false and keeps instances apart with leases(). The hold is a
  // session advisory lock on a connection of its own, released when the store closes or its
  // process dies.
  bool exclusive = true;
  // See SqliteStoreOptions::clock.
  const Clock* clock = nullptr;
};

// Store on a PostgreSQL database, which may be shared by several coordinators.
//
// Writes go through group commit on one connection with synchronous_commit = on: many callers'
// batches, each in its own subtransaction of one settle_apply_group call, share one
// transaction and one WAL flush; Commit returns
// OK only after the server has flushed it. Reads use a pool of connections, one statement
// each. The schema is created and migrated forward on Open, under an advisory lock, so several
// coordinators may start together; a database migrated by a newer Settle is refused.
//
// A connection lost in the middle of a group fails that group's callers with Unavailable and
// the next group connects again. If it was lost during COMMIT itself, the group may or may
// not have been stored: its callers, told Unavailable, retry, and each operation's
// precondition then tells them what happened (AlreadyExists, Conflict).
//
// Thread-safe: every method from any threads at once (reads take a pooled connection each,
// writes queue for the group). leases() lives as long as the store.
class PostgresStore final : public Store {
 public:
  // `conninfo`: a postgresql:// URL or libpq's key=value form. Unavailable if the database
  // cannot be reached, its schema is newer than this binary knows, or (options.exclusive)
  // another store holds it.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& conninfo,
                                                     PostgresStoreOptions options = {});

  // Applies every queued commit and closes every connection.
  ~PostgresStore() override;

  Status Commit(const WriteBatch& batch) override;
  void CommitAsync(WriteBatch batch, std::function<void(Status)> done) override;
  Result<std::optional<Transaction>> Load(const std::string& gid) override;
  Result<ListPage> List(const ListQuery& query) override;
  Result<std::vector<DueEntry>> ListUnfinished() override;
  Result<std::vector<UnfinishedCount>> CountUnfinished() override;
  Result<std::vector<CreatorUsage>> UnfinishedUsage(
      const std::optional<std::string>& creator) override;
  Result<std::vector<std::string>> ListFinishedBefore(TimePoint cutoff, std::size_t limit) override;
  Result<std::vector<UndoneRollback>> ListUndoneRollbacks(TimePoint finished_since,
                                                          std::int64_t after_id,
                                                          std::size_t limit) override;
  Result<std::vector<Subscriber>> Subscribers(const std::string& topic) override;
  Result<std::vector<Topic>> ListTopics() override;
  Result<AuditPage> ListAudit(const AuditQuery& query) override;
  Result<std::optional<BulkJob>> LoadJob(const std::string& id) override;
  Result<std::vector<BulkJob>> ListJobs(std::size_t limit, bool running_only) override;
  StoreStats Stats() const override;

  // The leases that let several coordinators share this database (open it with
  // exclusive = false). Lives as long as the store.
  InstanceLeases& leases();

  // The schema version this binary writes.
  static int SchemaVersion();

  class Impl;

 private:
  explicit PostgresStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True if `location` names a PostgreSQL database (a postgresql:// or postgres:// URL) rather
// than an SQLite file.
bool IsPostgresLocation(const std::string& location);

}  // namespace settle::storage
