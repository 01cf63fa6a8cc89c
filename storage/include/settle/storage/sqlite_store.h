#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/storage/store.h"

namespace settle::storage {

struct SqliteStoreOptions {
  // Most callers' batches folded into one SQLite transaction (one fsync).
  std::size_t max_batches_per_commit = 1024;
  // How long the writer waits for more callers before a commit when callers were already
  // queued at the end of the previous one (steady load); never when the store is idle. Fewer,
  // larger groups mean fewer fsyncs, which can help when the disk is shared with processes
  // that sync too, at the price of latency: off (0) by default.
  std::chrono::microseconds commit_delay{0};
  int busy_timeout_ms = 5000;
  // WAL length (in pages) after which a background thread copies the WAL back into the
  // database file, off the commit path: once per this many pages appended.
  int checkpoint_pages = 1000;
  // WAL length at which the writer checkpoints itself after a commit, as SQLite does by
  // default. Under steady load the background checkpoint never sees the WAL's end (new frames
  // keep arriving), and the WAL may only start over once every frame is copied: this bounds
  // its size, and the writer then only copies what the background left.
  int writer_checkpoint_pages = 16000;
  // Measures how long commits take (StoreStats::commit_time), with its monotonic reading; the
  // store never reads the time otherwise. Null: a SystemClock. Must outlive the store.
  const Clock* clock = nullptr;
};

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
