#include "sqlite_writer.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <utility>

namespace settle::storage {

Result<std::unique_ptr<SqliteWriter>> SqliteWriter::Start(
    std::unique_ptr<SqliteConnection> connection, std::unique_ptr<SqliteCheckpointer> checkpointer,
    const SqliteStoreOptions& options) {
  auto writer = std::unique_ptr<SqliteWriter>(
      new SqliteWriter(std::move(connection), std::move(checkpointer), options));
  // Replaces SQLite's automatic checkpoint (itself a WAL hook) on this connection.
  sqlite3_wal_hook(writer->connection_->handle(), &SqliteWriter::OnWalCommit, writer.get());
  try {
    writer->thread_ = std::thread([w = writer.get()] { w->Loop(); });
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("starting the sqlite writer thread: ") + e.what());
  }
  return writer;
}

SqliteWriter::SqliteWriter(std::unique_ptr<SqliteConnection> connection,
                           std::unique_ptr<SqliteCheckpointer> checkpointer,
                           const SqliteStoreOptions& options)
    : connection_(std::move(connection)),
      checkpointer_(std::move(checkpointer)),
      applier_(*connection_),
      max_batches_per_commit_(std::max<std::size_t>(1, options.max_batches_per_commit)),
      commit_delay_(std::max(std::chrono::microseconds(0), options.commit_delay)),
      checkpoint_pages_(std::max(1, options.checkpoint_pages)),
      writer_checkpoint_pages_(std::max(options.checkpoint_pages, options.writer_checkpoint_pages)) {}

SqliteWriter::~SqliteWriter() { Shutdown(); }

Status SqliteWriter::Commit(const WriteBatch& batch) {
  Pending pending;
  pending.batch = &batch;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Status::Unavailable("store is closed");
    if (batch.empty()) return Status::Ok();
    queue_.push_back(&pending);
  }
  // Outside the lock, so that the writer does not wake only to wait for it.
  work_.notify_one();
  pending.done.Wait();
  return std::move(pending.result);
}

void SqliteWriter::Shutdown() {
  std::lock_guard shutdown_lock(shutdown_mutex_);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  if (thread_.joinable()) thread_.join();
  checkpointer_.reset();
  if (connection_ != nullptr) {
    // Folds the WAL into the database so that the file alone is the whole state. A failure
    // only leaves the WAL for the next Open to replay.
    connection_->Exec("PRAGMA wal_checkpoint(TRUNCATE)").IgnoreError();
    connection_.reset();
  }
}

SqliteStoreStats SqliteWriter::Stats() const {
  SqliteStoreStats stats;
  stats.commits = commits_.load(std::memory_order_relaxed);
  stats.batches = batches_.load(std::memory_order_relaxed);
  stats.failed_commits = failed_commits_.load(std::memory_order_relaxed);
  stats.commit_micros_total = commit_micros_total_.load(std::memory_order_relaxed);
  stats.wal_pages_written = wal_pages_written_.load(std::memory_order_relaxed);
  stats.writer_checkpoints = writer_checkpoints_.load(std::memory_order_relaxed);
  stats.commit_time = commit_time_.Read();
  stats.batches_per_commit = batches_per_commit_.Read();
  stats.delayed_commits = delayed_commits_.load(std::memory_order_relaxed);
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

void SqliteWriter::Loop() {
  std::vector<Pending*> group;
  for (;;) {
    group.clear();
    {
      std::unique_lock lock(mutex_);
      // No timer: the writer takes whatever is queued the moment it is free, so an idle
      // store commits a lone batch at once and a busy one folds everything that queued up
      // during the previous fsync into the next.
      work_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and everything queued has been applied
      if (queued_behind_last_commit_ && commit_delay_.count() > 0 && queue_.size() < max_batches_per_commit_ &&
          !stopping_) {
        // Under steady load each fsync is what everyone waits for, and the disk may be shared
        // with participants that sync too: a short wait lets more callers join this group, so
        // that one fsync serves more of them (PostgreSQL's commit_delay). An idle store never
        // waits.
        lock.unlock();
        std::this_thread::sleep_for(commit_delay_);
        lock.lock();
        delayed_commits_.fetch_add(1, std::memory_order_relaxed);
      }
      if (queue_.size() <= max_batches_per_commit_) {
        group.swap(queue_);
      } else {
        const auto end = queue_.begin() + static_cast<std::ptrdiff_t>(max_batches_per_commit_);
        group.assign(queue_.begin(), end);
        queue_.erase(queue_.begin(), end);
      }
    }
    ApplyGroup(group);
  }
}

void SqliteWriter::ApplyGroup(std::vector<Pending*>& group) {
  std::vector<const WriteBatch*> batches;
  batches.reserve(group.size());
  for (const Pending* p : group) batches.push_back(p->batch);

  // steady_clock, not the injected Clock: this measures work, it is not a time of record.
  const auto start = std::chrono::steady_clock::now();
  SqliteBatchApplier::GroupResult result = applier_.ApplyGroup(batches);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);

  commit_micros_total_.fetch_add(static_cast<std::uint64_t>(micros.count()),
                                 std::memory_order_relaxed);
  commit_time_.Record(micros);
  if (result.committed) {
    commits_.fetch_add(1, std::memory_order_relaxed);
    batches_.fetch_add(group.size(), std::memory_order_relaxed);
    batches_per_commit_.Record(group.size());
  } else {
    failed_commits_.fetch_add(1, std::memory_order_relaxed);
  }
  // Callers that queued while this group was being committed, counted before the group's own
  // callers wake and can queue again: the writer is the bottleneck when there are any.
  {
    std::lock_guard lock(mutex_);
    queued_behind_last_commit_ = !queue_.empty();
  }
  // Stats are updated before any caller wakes, so a caller reading them after its Commit
  // returned sees its own group counted. Each caller has its own completion: no lock is
  // shared while they wake.
  for (std::size_t i = 0; i < group.size(); ++i) {
    group[i]->result = std::move(result.statuses[i]);
    group[i]->done.Signal();
  }
}

}  // namespace settle::storage
