#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/completion.h"
#include "settle/core/status.h"
#include "settle/storage/store_stats.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// What applying a group of callers' batches in one database transaction came to.
struct GroupResult {
  std::vector<Status> statuses;  // one per batch, in the order given
  bool committed = false;        // false: nothing of the group is stored
};

// Applies a group in one database transaction (see BatchApplier).
using GroupApplier = std::function<GroupResult(std::span<const WriteBatch* const>)>;

struct GroupCommitOptions {
  // Most callers' batches folded into one database transaction (one sync).
  std::size_t max_batches_per_commit = 1024;
  // How long the writer waits for more callers before a commit when callers were already
  // queued at the end of the previous one (steady load); never when the store is idle.
  std::chrono::microseconds commit_delay{0};
  // Measures each commit (Stats().commit_time) with its monotonic reading; null: a
  // SystemClock. Must outlive the committer.
  const Clock* clock = nullptr;
};

// Group commit, whatever the database: one thread applies queued batches, as many as are
// waiting (up to max_batches_per_commit), through `apply` in one transaction and one sync.
// An idle store commits a lone batch at once; a busy one folds everything that queued during
// the previous commit into the next. Under steady load (callers were already waiting when a
// commit ended) the thread waits commit_delay before the next group, so that more callers
// share its sync (PostgreSQL's commit_delay).
//
// Thread-safety: Commit() and Stats() from any thread; Shutdown() from one.
class GroupCommitter {
 public:
  // Starts the thread; `apply` runs on it only.
  static Result<std::unique_ptr<GroupCommitter>> Start(GroupApplier apply,
                                                       const GroupCommitOptions& options);

  // Shutdown().
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `batch` and blocks until it is applied: OK once it is durable, or its refusal, or
  // Unavailable if its group failed. Unavailable("store is closed") once Shutdown has started.
  Status Commit(const WriteBatch& batch);

  // The same without blocking: `done` gets the status on the group-commit thread (or at once
  // on the calling one, for an empty batch or a closed store). It must not block.
  void CommitAsync(WriteBatch batch, std::function<void(Status)> done);

  // Refuses new commits, applies every queued one and stops the thread. Idempotent.
  void Shutdown();

  // The group-commit fields of StoreStats; the others are left zero.
  StoreStats Stats() const;

 private:
  // A queued batch. For Commit() it lives on the blocked caller's stack: the thread fills in
  // `result`, then signals `signal`, after which it no longer touches the Pending. For
  // CommitAsync() it owns its batch on the heap and the thread hands `result` to `done`, then
  // deletes it.
  struct Pending {
    const WriteBatch* batch = nullptr;
    Status result;
    Completion signal;
    WriteBatch owned;
    std::function<void(Status)> done;
  };

  GroupCommitter(GroupApplier apply, const GroupCommitOptions& options);
  // Queues `pending`; false if the store is closed.
  bool Enqueue(Pending* pending);
  void Loop();
  void ApplyGroup(std::vector<Pending*>& group);

  GroupApplier apply_;
  SystemClock system_clock_;  // when the options name no clock
  const Clock& clock_;
  const std::size_t max_batches_per_commit_;
  const std::chrono::microseconds commit_delay_;
  bool queued_behind_last_commit_ = false;  // the thread only

  std::mutex mutex_;
  std::condition_variable work_;
  std::vector<Pending*> queue_;  // guarded by mutex_
  bool stopping_ = false;        // guarded by mutex_
  std::mutex shutdown_mutex_;    // serializes Shutdown()
  std::thread thread_;

  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> batches_{0};
  std::atomic<std::uint64_t> failed_commits_{0};
  mutable std::mutex failure_mutex_;
  std::string last_failure_;  // guarded by failure_mutex_
  std::atomic<std::uint64_t> commit_micros_total_{0};
  std::atomic<std::uint64_t> delayed_commits_{0};
  metrics::LatencyHistogram commit_time_;
  // Powers of two up to the largest group (max_batches_per_commit's default).
  static constexpr std::array<std::uint64_t, 11> kBatchBounds = {1,  2,   4,   8,   16,  32,
                                                                 64, 128, 256, 512, 1024};
  metrics::Histogram batches_per_commit_{kBatchBounds};
};

}  // namespace settle::storage
