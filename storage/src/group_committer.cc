#include "group_committer.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "settle/core/thread_name.h"

namespace settle::storage {

Result<std::unique_ptr<GroupCommitter>> GroupCommitter::Start(GroupApplier apply,
                                                              const GroupCommitOptions& options) {
  auto committer = std::unique_ptr<GroupCommitter>(new GroupCommitter(std::move(apply), options));
  try {
    committer->thread_ = std::thread([c = committer.get()] {
      NameThisThread("settle-writer");
      c->Loop();
    });
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("starting the group-commit thread: ") + e.what());
  }
  return committer;
}

GroupCommitter::GroupCommitter(GroupApplier apply, const GroupCommitOptions& options)
    : apply_(std::move(apply)),
      clock_(options.clock != nullptr ? *options.clock : system_clock_),
      max_batches_per_commit_(std::max<std::size_t>(1, options.max_batches_per_commit)),
      commit_delay_(std::max(std::chrono::microseconds(0), options.commit_delay)) {}

GroupCommitter::~GroupCommitter() { Shutdown(); }

bool GroupCommitter::Enqueue(Pending* pending) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    queue_.push_back(pending);
  }
  // Outside the lock, so that the thread does not wake only to wait for it.
  work_.notify_one();
  return true;
}

Status GroupCommitter::Commit(const WriteBatch& batch) {
  if (batch.empty()) return Status::Ok();
  Pending pending;
  pending.batch = &batch;
  if (!Enqueue(&pending)) return Status::Unavailable("store is closed");
  pending.signal.Wait();
  return std::move(pending.result);
}

void GroupCommitter::CommitAsync(WriteBatch batch, std::function<void(Status)> done) {
  if (batch.empty()) return done(Status::Ok());
  auto pending = std::make_unique<Pending>();
  pending->owned = std::move(batch);
  pending->batch = &pending->owned;
  pending->done = std::move(done);
  if (!Enqueue(pending.get())) return pending->done(Status::Unavailable("store is closed"));
  pending.release();  // the thread deletes it once done
}

void GroupCommitter::Shutdown() {
  std::lock_guard shutdown_lock(shutdown_mutex_);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  if (thread_.joinable()) thread_.join();
}

StoreStats GroupCommitter::Stats() const {
  StoreStats stats;
  stats.commits = commits_.load(std::memory_order_relaxed);
  stats.batches = batches_.load(std::memory_order_relaxed);
  stats.failed_commits = failed_commits_.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(failure_mutex_);
    stats.last_commit_failure = last_failure_;
  }
  stats.commit_micros_total = commit_micros_total_.load(std::memory_order_relaxed);
  stats.commit_time = commit_time_.Read();
  stats.batches_per_commit = batches_per_commit_.Read();
  stats.delayed_commits = delayed_commits_.load(std::memory_order_relaxed);
  return stats;
}

void GroupCommitter::Loop() {
  std::vector<Pending*> group;
  for (;;) {
    group.clear();
    {
      std::unique_lock lock(mutex_);
      // No timer: the thread takes whatever is queued the moment it is free.
      work_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and everything queued has been applied
      if (queued_behind_last_commit_ && commit_delay_.count() > 0 &&
          queue_.size() < max_batches_per_commit_ && !stopping_) {
        // Under steady load each sync is what everyone waits for, and the disk may be shared
        // with participants that sync too: a short wait lets more callers join this group.
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

void GroupCommitter::ApplyGroup(std::vector<Pending*>& group) {
  std::vector<const WriteBatch*> batches;
  batches.reserve(group.size());
  for (const Pending* p : group) batches.push_back(p->batch);
  // The monotonic reading: this measures work, it is not a time of record.
  const MonoTime start = clock_.Monotonic();
  GroupResult result = apply_(batches);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Monotonic() - start);
  commit_micros_total_.fetch_add(static_cast<std::uint64_t>(micros.count()),
                                 std::memory_order_relaxed);
  commit_time_.Record(micros);
  if (result.committed) {
    commits_.fetch_add(1, std::memory_order_relaxed);
    batches_.fetch_add(group.size(), std::memory_order_relaxed);
    batches_per_commit_.Record(group.size());
  } else {
    std::string why = "failed";
    for (const Status& s : result.statuses) {
      if (!s.ok()) {
        why = s.ToString();
        break;
      }
    }
    {
      std::lock_guard lock(failure_mutex_);
      last_failure_ = std::move(why);
    }
    failed_commits_.fetch_add(1, std::memory_order_relaxed);
  }
  // Callers that queued while this group was being committed, counted before the group's own
  // callers wake and can queue again: the thread is the bottleneck when there are any.
  {
    std::lock_guard lock(mutex_);
    queued_behind_last_commit_ = !queue_.empty();
  }
  // Stats are updated before any caller wakes, so a caller reading them after its Commit
  // returned sees its own group counted. Each caller has its own completion: no lock is
  // shared while they wake.
  for (std::size_t i = 0; i < group.size(); ++i) {
    Pending* pending = group[i];
    if (pending->done) {
      std::function<void(Status)> done = std::move(pending->done);
      delete pending;
      done(std::move(result.statuses[i]));
    } else {
      pending->result = std::move(result.statuses[i]);
      pending->signal.Signal();
    }
  }
}

}  // namespace settle::storage
