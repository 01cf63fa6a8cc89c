#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/storage/sqlite_store_options.h"
#include "settle/storage/store.h"

namespace settle::storage {

// The counters of a SqliteStore: StoreStats with its WAL fields filled in.
using SqliteStoreStats = StoreStats;

// The embedded Store: one SQLite file in WAL mode with synchronous=FULL.
//
// Group commit: one writer thread owns the write connection. Commit() enqueues the batch and
// blocks; the writer drains everything queued, applies each caller's batch inside its own
// SAVEPOINT of one BEGIN IMMEDIATE transaction, commits once, and then wakes every caller with
// its own result. Idle, a single Commit is applied at once (no added wait); under load many
// callers share one fsync. A failed precondition rolls back only that caller's savepoint; a
// failed COMMIT fails every caller of the group with Unavailable and leaves nothing visible.
//
// Checkpoints run on a thread of their own (see SqliteStoreOptions::checkpoint_pages).
// Reads use a pool of read-only connections and see every Commit that has returned.
// The schema is versioned with PRAGMA user_version and migrated forward on Open. A file
// written by a newer Settle (higher version) is refused. Only one process may open a file:
// Open takes an exclusive lock on "<path>.lock", released when the store is destroyed or the
// process dies.
class SqliteStore final : public Store {
 public:
  // Creates the file (and its parent directory) if needed. Unavailable if it cannot be opened
  // or locked, or its schema is newer than this binary knows. A file that exists is checked
  // first (SQLite's quick_check, which reads it whole): a damaged one, or one that is not a
  // database, is InvalidArgument naming the file and what is wrong, and nothing in it changes.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   SqliteStoreOptions options = {});

  // Drains queued commits, stops the writer, checkpoints the WAL and closes every connection.
  ~SqliteStore() override;

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

  // The schema version this binary writes.
  static int SchemaVersion();

  class Impl;

 private:
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::storage
