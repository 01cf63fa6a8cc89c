#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "settle/common/completion.h"
#include "settle/common/sqlite_connection.h"
#include "settle/common/status.h"
#include "settle/storage/sqlite_store.h"
#include "settle/storage/write_batch.h"
#include "sqlite_batch_applier.h"
#include "sqlite_checkpointer.h"

namespace settle::storage {

// Group commit: one thread owns the write connection and applies queued batches, as many as
// are waiting (up to max_batches_per_commit) in one transaction and one fsync.
//
// Under steady load (callers were already waiting when a commit ended) the writer waits
// options.commit_delay before starting the next group, so that more callers share its fsync.
//
// Checkpoints: the writer replaces SQLite's automatic checkpoint with a WAL hook that hands
// the work to `checkpointer` once the WAL reaches options.checkpoint_pages, and checkpoints
// itself only past options.writer_checkpoint_pages.
//
// Thread-safety: Commit() and Stats() may be called from any thread; Shutdown() from one.
class SqliteWriter {
 public:
  // Takes a configured, migrated write connection and starts the writer thread.
  static Result<std::unique_ptr<SqliteWriter>> Start(
      std::unique_ptr<SqliteConnection> connection,
      std::unique_ptr<SqliteCheckpointer> checkpointer, const SqliteStoreOptions& options);

  // Shutdown().
  ~SqliteWriter();
  SqliteWriter(const SqliteWriter&) = delete;
  SqliteWriter& operator=(const SqliteWriter&) = delete;

  // Queues `batch` and blocks until the writer has applied it: OK once it is durable, or its
  // refusal, or Unavailable if its group failed. Unavailable("store is closed") once Shutdown
  // has started. `batch` must stay alive until this returns (it does: this blocks).
  Status Commit(const WriteBatch& batch);

  // Refuses new commits, applies every queued one, stops the thread and the checkpointer,
  // checkpoints the WAL into the database file (TRUNCATE) and closes the connection.
  // Idempotent.
  void Shutdown();

  SqliteStoreStats Stats() const;

 private:
  // A caller blocked in Commit(); lives on its stack. The writer fills in `result`, then
  // signals `done`, after which it no longer touches the Pending.
  struct Pending {
    const WriteBatch* batch = nullptr;
    Status result;
    Completion done;
  };

  SqliteWriter(std::unique_ptr<SqliteConnection> connection,
               std::unique_ptr<SqliteCheckpointer> checkpointer, const SqliteStoreOptions& options);
  void Loop();
  void ApplyGroup(std::vector<Pending*>& group);
  // The WAL hook: runs on the writer thread after each commit, with the WAL's length.
  static int OnWalCommit(void* writer, sqlite3* db, const char* database, int wal_pages);

  std::unique_ptr<SqliteConnection> connection_;
  std::unique_ptr<SqliteCheckpointer> checkpointer_;
  SqliteBatchApplier applier_;
  const std::size_t max_batches_per_commit_;
  const std::chrono::microseconds commit_delay_;
  const int checkpoint_pages_;
  const int writer_checkpoint_pages_;
  int last_wal_pages_ = 0;      // writer thread only
  bool queued_behind_last_commit_ = false;  // writer thread only
  int requested_at_pages_ = 0;  // WAL length at the last background request; writer only

  std::mutex mutex_;
  std::condition_variable work_;
  std::vector<Pending*> queue_;  // guarded by mutex_
  bool stopping_ = false;        // guarded by mutex_

  mutable std::mutex shutdown_mutex_;  // serializes Shutdown(); guards checkpointer_
  std::thread thread_;

  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> batches_{0};
  std::atomic<std::uint64_t> failed_commits_{0};
  std::atomic<std::uint64_t> commit_micros_total_{0};
  std::atomic<std::uint64_t> wal_pages_written_{0};
  LatencyHistogram commit_time_;
  // Powers of two up to the largest group (max_batches_per_commit's default).
  static constexpr std::array<std::uint64_t, 11> kBatchBounds = {1,  2,   4,   8,   16,  32,
                                                                 64, 128, 256, 512, 1024};
  Histogram batches_per_commit_{kBatchBounds};
  std::atomic<std::uint64_t> delayed_commits_{0};
  std::atomic<std::uint64_t> writer_checkpoints_{0};
};

}  // namespace settle::storage
