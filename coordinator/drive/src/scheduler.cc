#include "settle/drive/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "settle/async/event.h"

namespace settle::drive {
namespace {

// The shortest wait of a held transaction between two looks of its own (HostGates::Holds).
constexpr Duration kMinHeldWait{1000};
// How soon a pass that threw is retried. A throw is a bug; the transaction must not be lost.
constexpr Duration kRetryAfterCrashedPass{1000};
// The timer's longest sleep when nothing is due: it wakes for anything scheduled earlier.
constexpr Duration kIdleWait{3'600'000};

std::optional<TimePoint> Earliest(std::optional<TimePoint> a, std::optional<TimePoint> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

Scheduler::Scheduler(const Clock& clock, asio::any_io_executor executor, PassRunner& runner,
                     std::size_t max_passes, const calls::HostGates* gates)
    : clock_(clock),
      executor_(std::move(executor)),
      runner_(runner),
      max_passes_(std::max<std::size_t>(1, max_passes)),
      gates_(gates),
      timer_strand_(asio::make_strand(executor_)),
      timer_(timer_strand_) {}

Scheduler::~Scheduler() {
  Stop(Duration(0));
  // A started pass refers to this scheduler until it finishes; it returns early because stop
  // was requested. The timer loop ends once woken.
  std::unique_lock lock(mu_);
  pass_done_cv_.wait(lock, [&] { return running_ == 0 && timer_done_; });
}

void Scheduler::Wake() {
  asio::post(timer_strand_, [this] { timer_.cancel(); });
}

void Scheduler::Schedule(const std::string& gid, TimePoint due) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    Entry& entry = entries_[gid];
    entry.held = false;
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
      if (earliest && started_) Wake();
      return;
    }
  }
  RunOnce();
}

void Scheduler::ScheduleFound(const std::string& gid, TimePoint due) {
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(gid);
    if (it != entries_.end() && it->second.held && !it->second.running) return;
  }
  Schedule(gid, due);
}

std::size_t Scheduler::RunOnce() {
  std::vector<std::string> due;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return 0;
    const TimePoint now = clock_.Now();
    while (!queue_.empty() && queue_.begin()->first <= now && background_ < max_passes_) {
      std::string gid = queue_.begin()->second;
      Entry& entry = entries_[gid];
      if (entry.held && gates_ != nullptr && gates_->Holds(gid)) {
        // Its gate still holds it and wakes it: no pass (it would read the transaction only to
        // be held again), another wait instead.
        queue_.erase(queue_.begin());
        entry.due = now + entry.held_for;
        queue_.emplace(*entry.due, gid);
        continue;
      }
      ClaimLocked(gid, entry);
      ++background_;
      due.push_back(std::move(gid));
    }
  }
  for (std::string& gid : due) {
    asio::co_spawn(asio::make_strand(executor_),
                   RunPass(std::move(gid), std::nullopt, /*counted=*/true), asio::detached);
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

std::optional<Scheduler::PassClaim> Scheduler::TryClaim(const std::string& gid) {
  std::lock_guard lock(mu_);
  if (stopping_) return std::nullopt;
  Entry& entry = entries_[gid];
  if (entry.running) return std::nullopt;
  return PassClaim(*this, gid, ClaimLocked(gid, entry));
}

asio::awaitable<std::optional<Scheduler::PassClaim>> Scheduler::Claim(std::string gid,
                                                                      Duration max_wait) {
  const MonoTime deadline = clock_.Monotonic() + max_wait;
  for (;;) {
    auto ended = std::make_shared<async::Event>();
    {
      std::lock_guard lock(mu_);
      if (stopping_) co_return std::nullopt;
      Entry& entry = entries_[gid];
      if (!entry.running) co_return PassClaim(*this, gid, ClaimLocked(gid, entry));
      entry.on_end.push_back([ended] { ended->Set(); });
    }
    const auto left = std::chrono::duration_cast<Duration>(deadline - clock_.Monotonic());
    if (left <= Duration(0)) co_return std::nullopt;
    const bool ended_in_time = co_await ended->WaitFor(left);
    if (!ended_in_time) co_return std::nullopt;
  }
}

asio::awaitable<std::optional<PassResult>> Scheduler::RunNow(std::string gid, Duration max_wait) {
  std::optional<PassClaim> claim = co_await Claim(std::move(gid), max_wait);
  if (!claim) co_return std::nullopt;
  co_return co_await claim->RunHere();
}

asio::awaitable<PassResult> Scheduler::RunPass(std::string gid,
                                               std::optional<storage::Transaction> stored,
                                               bool counted) {
  PassResult result;
  try {
    std::stop_token stop = stop_source_.get_token();  // not a temporary across the co_await
    result = co_await runner_.RunPass(gid, std::move(stored), std::move(stop));
  } catch (const std::exception& e) {
    spdlog::critical("gid={} pass failed with an exception (a bug): {}", gid, e.what());
    result = PassResult{clock_.Now() + kRetryAfterCrashedPass, std::nullopt};
  }
  Finish(gid, result.next_due, counted, result.held);
  co_return result;
}

Scheduler::PassClaim::PassClaim(Scheduler& scheduler, std::string gid,
                                std::optional<TimePoint> previous_due)
    : scheduler_(&scheduler), gid_(std::move(gid)), previous_due_(previous_due) {}

Scheduler::PassClaim::PassClaim(PassClaim&& other) noexcept
    : scheduler_(std::exchange(other.scheduler_, nullptr)),
      gid_(std::move(other.gid_)),
      previous_due_(other.previous_due_) {}

Scheduler::PassClaim::~PassClaim() {
  if (scheduler_ != nullptr)
    scheduler_->Finish(gid_, previous_due_, /*counted=*/false, /*held=*/false);
}

asio::awaitable<PassResult> Scheduler::PassClaim::RunHere(
    std::optional<storage::Transaction> stored) {
  Scheduler& scheduler = *std::exchange(scheduler_, nullptr);
  co_return co_await scheduler.RunPass(gid_, std::move(stored), /*counted=*/false);
}

void Scheduler::PassClaim::RunInBackground(std::optional<storage::Transaction> stored) {
  Scheduler& scheduler = *std::exchange(scheduler_, nullptr);
  asio::co_spawn(asio::make_strand(scheduler.executor_),
                 scheduler.RunPass(gid_, std::move(stored), false), asio::detached);
}

void Scheduler::Finish(const std::string& gid, std::optional<TimePoint> next_due, bool counted,
                       bool held) {
  std::vector<std::function<void()>> on_end;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    Entry& entry = entries_[gid];
    entry.running = false;
    on_end.swap(entry.on_end);
    --running_;
    if (counted) {
      --background_;
      // A slot is free: passes held back by max_passes may start.
      wake = !queue_.empty() && queue_.begin()->first <= clock_.Now();
    }
    const std::optional<TimePoint> next = Earliest(next_due, entry.rerun);
    entry.rerun.reset();
    if (next && !stopping_) {
      entry.held = held && next == next_due;  // not if asked to run again meanwhile
      if (entry.held) entry.held_for = std::max(*next - clock_.Now(), kMinHeldWait);
      entry.due = *next;
      queue_.emplace(*next, gid);
      // The timer starts it, even when due at once: starting it from here would let a pass
      // that ends at once recurse.
      wake = true;
    } else {
      entries_.erase(gid);
    }
    wake = wake && started_ && !stopping_;
    pass_done_cv_.notify_all();
  }
  if (wake) Wake();
  for (auto& callback : on_end) callback();
}

void Scheduler::Start() {
  {
    std::lock_guard lock(mu_);
    if (started_ || stopping_) return;
    started_ = true;
    timer_done_ = false;
  }
  asio::co_spawn(timer_strand_, TimerLoop(), [this](std::exception_ptr) {
    std::lock_guard lock(mu_);
    timer_done_ = true;
    pass_done_cv_.notify_all();
  });
}

asio::awaitable<void> Scheduler::TimerLoop() {
  for (;;) {
    Duration wait = kIdleWait;
    {
      std::lock_guard lock(mu_);
      if (stopping_) co_return;
      if (!queue_.empty()) {
        // Due but held back by max_passes: a finishing pass wakes the timer.
        wait = background_ >= max_passes_ ? kIdleWait : queue_.begin()->first - clock_.Now();
      }
    }
    if (wait <= Duration(0)) {
      RunOnce();
      continue;
    }
    timer_.expires_after(std::min(wait, kIdleWait));
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

void Scheduler::Stop(Duration grace) {
  bool started = false;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    started = started_;
    stop_source_.request_stop();
    pass_done_cv_.notify_all();
  }
  if (started) Wake();
  // Claims waiting for a pass's end learn that the scheduler is stopping.
  std::vector<std::function<void()>> waiting;
  {
    std::lock_guard lock(mu_);
    for (auto& [gid, entry] : entries_) {
      for (auto& callback : entry.on_end) waiting.push_back(std::move(callback));
      entry.on_end.clear();
    }
  }
  for (auto& callback : waiting) callback();
  std::unique_lock lock(mu_);
  pass_done_cv_.wait_for(lock, grace, [&] { return running_ == 0; });
}

void Scheduler::WaitForPasses() {
  std::unique_lock lock(mu_);
  pass_done_cv_.wait(lock, [&] { return running_ == 0 && timer_done_; });
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

}  // namespace settle::drive
