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

#include "group_committer.h"
#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"
#include "settle/storage/sqlite_store_options.h"
#include "settle/storage/store_stats.h"
#include "settle/storage/write_batch.h"
#include "sqlite_batch_applier.h"
#include "sqlite_checkpointer.h"

namespace settle::storage {

// The SQLite store's writer: group commit (GroupCommitter) on the one write connection.
//
// Checkpoints: the writer replaces SQLite's automatic checkpoint with a WAL hook that hands
// the work to `checkpointer` once the WAL reaches options.checkpoint_pages, and checkpoints
// itself only past options.writer_checkpoint_pages.
//
// Thread-safety: Commit() and Stats() may be called from any thread; Shutdown() from one.
class SqliteWriter {
 public:
  // Takes a configured, migrated write connection and starts the group-commit thread.
  static Result<std::unique_ptr<SqliteWriter>> Start(
      std::unique_ptr<db::SqliteConnection> connection,
      std::unique_ptr<SqliteCheckpointer> checkpointer, const SqliteStoreOptions& options);

  // Shutdown().
  ~SqliteWriter();
  SqliteWriter(const SqliteWriter&) = delete;
  SqliteWriter& operator=(const SqliteWriter&) = delete;

  // See GroupCommitter::Commit and CommitAsync.
  Status Commit(const WriteBatch& batch);
  void CommitAsync(WriteBatch batch, std::function<void(Status)> done);

  // Refuses new commits, applies every queued one, stops the thread and the checkpointer,
  // checkpoints the WAL into the database file (TRUNCATE) and closes the connection.
  // Idempotent.
  void Shutdown();

  StoreStats Stats() const;

 private:
  SqliteWriter(std::unique_ptr<db::SqliteConnection> connection,
               std::unique_ptr<SqliteCheckpointer> checkpointer, const SqliteStoreOptions& options);
  // The WAL hook: runs on the group-commit thread after each commit, with the WAL's length.
  static int OnWalCommit(void* writer, sqlite3* db, const char* database, int wal_pages);

  std::unique_ptr<db::SqliteConnection> connection_;
  std::unique_ptr<SqliteCheckpointer> checkpointer_;
  SqliteBatchApplier applier_;
  const int checkpoint_pages_;
  const int writer_checkpoint_pages_;
  int last_wal_pages_ = 0;      // group-commit thread only
  int requested_at_pages_ = 0;  // WAL length at the last background request; same thread

  mutable std::mutex shutdown_mutex_;  // serializes Shutdown(); guards checkpointer_
  std::unique_ptr<GroupCommitter> committer_;

  std::atomic<std::uint64_t> wal_pages_written_{0};
  std::atomic<std::uint64_t> writer_checkpoints_{0};
};

}  // namespace settle::storage
