#include "settle/coordinator/scheduler.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <memory>
#include <utility>
#include <vector>

namespace settle::coordinator {
namespace {

// How soon a pass that threw is retried. A throw is a bug; the transaction must not be lost.
constexpr Duration kRetryAfterCrashedPass{1000};

std::optional<TimePoint> Earliest(std::optional<TimePoint> a, std::optional<TimePoint> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

Scheduler::Scheduler(const Clock& clock, Executor& executor, PassRunner& runner)
    : clock_(clock), executor_(executor), runner_(runner) {}

Scheduler::~Scheduler() {
  Stop(Duration(0));
  // A dispatched pass refers to this scheduler until it finishes; it returns early because
  // stop was requested.
  std::unique_lock lock(mu_);
  pass_done_cv_.wait(lock, [&] { return running_ == 0; });
}

void Scheduler::Schedule(const std::string& gid, TimePoint due) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    Entry& entry = entries_[gid];
    if (entry.running) {
      entry.rerun = Earliest(entry.rerun, due);
      return;
    }
    if (entry.due && *entry.due <= due) return;
    const bool earliest = queue_.empty() || due < queue_.begin()->first;
    if (entry.due) queue_.erase({*entry.due, gid});
    entry.due = due;
    queue_.emplace(due, gid);
    if (due > clock_.Now()) {
      if (earliest) timer_cv_.notify_one();
      return;
    }
  }
  RunOnce();
}

std::size_t Scheduler::RunOnce() {
  std::vector<std::string> due;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return 0;
    const TimePoint now = clock_.Now();
    while (!queue_.empty() && queue_.begin()->first <= now) {
      std::string gid = queue_.begin()->second;
      ClaimLocked(gid, entries_[gid]);
      due.push_back(std::move(gid));
    }
  }
  for (std::string& gid : due) {
    executor_.Post([this, gid = std::move(gid)] { RunPass(gid, std::nullopt); });
  }
  return due.size();
}

std::optional<TimePoint> Scheduler::ClaimLocked(const std::string& gid, Entry& entry) {
  const std::optional<TimePoint> due = entry.due;
  if (entry.due) queue_.erase({*entry.due, gid});
  entry.due.reset();
  entry.running = true;
  ++running_;
  return due;
}

std::optional<Scheduler::PassClaim> Scheduler::Claim(const std::string& gid, Duration max_wait) {
  std::unique_lock lock(mu_);
  const bool idle = pass_done_cv_.wait_for(lock, max_wait, [&] {
    auto it = entries_.find(gid);
    return stopping_ || it == entries_.end() || !it->second.running;
  });
  if (!idle || stopping_) return std::nullopt;
  return PassClaim(*this, gid, ClaimLocked(gid, entries_[gid]));
}

std::optional<PassResult> Scheduler::RunNow(const std::string& gid, Duration max_wait) {
  std::optional<PassClaim> claim = Claim(gid, max_wait);
  if (!claim) return std::nullopt;
  return claim->RunHere();
}

PassResult Scheduler::RunPass(const std::string& gid,
                              std::optional<storage::Transaction> stored) {
  PassResult result;
  try {
    result = runner_.RunPass(gid, std::move(stored), stop_source_.get_token());
  } catch (const std::exception& e) {
    spdlog::critical("gid={} pass failed with an exception (a bug): {}", gid, e.what());
    result = PassResult{clock_.Now() + kRetryAfterCrashedPass, std::nullopt};
  }
  Finish(gid, result.next_due);
  return result;
}

Scheduler::PassClaim::PassClaim(Scheduler& scheduler, std::string gid,
                                std::optional<TimePoint> previous_due)
    : scheduler_(&scheduler), gid_(std::move(gid)), previous_due_(previous_due) {}

Scheduler::PassClaim::PassClaim(PassClaim&& other) noexcept
    : scheduler_(std::exchange(other.scheduler_, nullptr)),
      gid_(std::move(other.gid_)),
      previous_due_(other.previous_due_) {}

Scheduler::PassClaim::~PassClaim() {
  if (scheduler_ != nullptr) scheduler_->Finish(gid_, previous_due_);
}

PassResult Scheduler::PassClaim::RunHere(std::optional<storage::Transaction> stored) {
  Scheduler& scheduler = *std::exchange(scheduler_, nullptr);
  return scheduler.RunPass(gid_, std::move(stored));
}

void Scheduler::PassClaim::RunInBackground(std::optional<storage::Transaction> stored) {
  Scheduler& scheduler = *std::exchange(scheduler_, nullptr);
  // std::function needs a copyable task: share the transaction instead of copying it.
  auto state = std::make_shared<std::optional<storage::Transaction>>(std::move(stored));
  scheduler.executor_.Post([&scheduler, gid = gid_, state] {
    scheduler.RunPass(gid, std::move(*state));
  });
}

void Scheduler::Finish(const std::string& gid, std::optional<TimePoint> next_due) {
  std::lock_guard lock(mu_);
  Entry& entry = entries_[gid];
  entry.running = false;
  --running_;
  const std::optional<TimePoint> next = Earliest(next_due, entry.rerun);
  entry.rerun.reset();
  if (next && !stopping_) {
    entry.due = *next;
    queue_.emplace(*next, gid);
    // The timer thread dispatches it, even when due at once: dispatching from here would let
    // an inline executor recurse.
    timer_cv_.notify_one();
  } else {
    entries_.erase(gid);
  }
  pass_done_cv_.notify_all();
}

void Scheduler::Start() {
  std::lock_guard lock(mu_);
  if (timer_thread_.joinable() || stopping_) return;
  timer_thread_ = std::thread([this] { TimerLoop(); });
}

void Scheduler::TimerLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      timer_cv_.wait(lock);
      continue;
    }
    const Duration wait = queue_.begin()->first - clock_.Now();
    if (wait.count() > 0) {
      timer_cv_.wait_for(lock, wait);
      continue;
    }
    lock.unlock();
    RunOnce();
    lock.lock();
  }
}

void Scheduler::Stop(Duration grace) {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    stop_source_.request_stop();
  }
  timer_cv_.notify_all();
  pass_done_cv_.notify_all();
  if (timer_thread_.joinable() && timer_thread_.get_id() != std::this_thread::get_id()) {
    timer_thread_.join();
  }
  std::unique_lock lock(mu_);
  pass_done_cv_.wait_for(lock, grace, [&] { return running_ == 0; });
}

std::optional<TimePoint> Scheduler::DueTime(const std::string& gid) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(gid);
  if (it == entries_.end()) return std::nullopt;
  return Earliest(it->second.due, it->second.rerun);
}

std::size_t Scheduler::Running() const {
  std::lock_guard lock(mu_);
  return running_;
}

std::size_t Scheduler::Scheduled() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace settle::coordinator
