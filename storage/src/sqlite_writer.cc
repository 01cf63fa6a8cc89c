#include "sqlite_writer.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <utility>

namespace settle::storage {

Result<std::unique_ptr<SqliteWriter>> SqliteWriter::Start(
    std::unique_ptr<db::SqliteConnection> connection,
    std::unique_ptr<SqliteCheckpointer> checkpointer, const SqliteStoreOptions& options) {
  auto writer = std::unique_ptr<SqliteWriter>(
      new SqliteWriter(std::move(connection), std::move(checkpointer), options));
  // Replaces SQLite's automatic checkpoint (itself a WAL hook) on this connection.
  sqlite3_wal_hook(writer->connection_->handle(), &SqliteWriter::OnWalCommit, writer.get());
  Result<std::unique_ptr<GroupCommitter>> committer = GroupCommitter::Start(
      [w = writer.get()](std::span<const WriteBatch* const> group) {
        return w->applier_.ApplyGroup(group);
      },
      GroupCommitOptions{options.max_batches_per_commit, options.commit_delay, options.clock});
  if (!committer) return committer.status();
  writer->committer_ = std::move(committer).value();
  return writer;
}

SqliteWriter::SqliteWriter(std::unique_ptr<db::SqliteConnection> connection,
                           std::unique_ptr<SqliteCheckpointer> checkpointer,
                           const SqliteStoreOptions& options)
    : connection_(std::move(connection)),
      checkpointer_(std::move(checkpointer)),
      applier_(*connection_),
      checkpoint_pages_(std::max(1, options.checkpoint_pages)),
      writer_checkpoint_pages_(
          std::max(options.checkpoint_pages, options.writer_checkpoint_pages)) {}

SqliteWriter::~SqliteWriter() { Shutdown(); }

Status SqliteWriter::Commit(const WriteBatch& batch) { return committer_->Commit(batch); }

void SqliteWriter::CommitAsync(WriteBatch batch, std::function<void(Status)> done) {
  committer_->CommitAsync(std::move(batch), std::move(done));
}

void SqliteWriter::Shutdown() {
  std::lock_guard shutdown_lock(shutdown_mutex_);
  if (committer_ != nullptr) committer_->Shutdown();
  checkpointer_.reset();
  if (connection_ != nullptr) {
    // Folds the WAL into the database so that the file alone is the whole state. A failure
    // only leaves the WAL for the next Open to replay.
    connection_->Exec("PRAGMA wal_checkpoint(TRUNCATE)").IgnoreError();
    connection_.reset();
  }
}

StoreStats SqliteWriter::Stats() const {
  StoreStats stats = committer_->Stats();
  stats.wal_pages_written = wal_pages_written_.load(std::memory_order_relaxed);
  stats.writer_checkpoints = writer_checkpoints_.load(std::memory_order_relaxed);
  // After Shutdown the checkpointer is gone; its count is then no longer reported.
  std::lock_guard lock(shutdown_mutex_);
  if (checkpointer_ != nullptr) stats.background_checkpoints = checkpointer_->checkpoints();
  return stats;
}

int SqliteWriter::OnWalCommit(void* self, sqlite3* db, const char* database, int wal_pages) {
  auto* writer = static_cast<SqliteWriter*>(self);
  // A shorter WAL than last time means SQLite started it over from the beginning.
  const bool restarted = wal_pages < writer->last_wal_pages_;
  const int appended = restarted ? wal_pages : wal_pages - writer->last_wal_pages_;
  writer->last_wal_pages_ = wal_pages;
  if (restarted) writer->requested_at_pages_ = 0;
  writer->wal_pages_written_.fetch_add(static_cast<std::uint64_t>(appended),
                                       std::memory_order_relaxed);
  if (wal_pages >= writer->writer_checkpoint_pages_) {
    // Between two transactions of the only writer: this checkpoint reaches the WAL's end, so
    // the next transaction starts the WAL over. It copies only what the background
    // checkpoints have not. BUSY (a background one is running) means the next commit retries.
    if (sqlite3_wal_checkpoint_v2(db, database, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr) ==
        SQLITE_OK) {
      writer->writer_checkpoints_.fetch_add(1, std::memory_order_relaxed);
    }
  } else if (wal_pages - writer->requested_at_pages_ >= writer->checkpoint_pages_ &&
             writer->checkpointer_ != nullptr) {
    // One background checkpoint per checkpoint_pages appended: each copies the pages
    // committed before it starts, with one sync of the database file.
    writer->requested_at_pages_ = wal_pages;
    writer->checkpointer_->Request();
  }
  return SQLITE_OK;
}

}  // namespace settle::storage
