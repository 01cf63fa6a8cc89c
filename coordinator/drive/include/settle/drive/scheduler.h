#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "settle/async/asio.h"
#include "settle/calls/host_gates.h"
#include "settle/core/clock.h"
#include "settle/drive/pass_runner.h"

namespace settle::drive {

// Knows when each unfinished transaction is next due and starts due ones as coroutines on
// `executor`, each on a strand of its own (so that its branch calls run in place, see
// net::Client), one pass at a time per gid: a transaction that becomes due while its pass runs
// is re-armed and runs again afterwards, never twice at once. At most `max_passes` passes it
// starts itself run at once (each may hold connections to participants); the rest wait
// their turn in due order. A pass a request runs itself (wait_result) is counted, not capped.
//
// Stepwise: RunOnce() starts what is due now and returns, so tests drive it with a fake clock
// and run the executor's context themselves. Start() adds a timer (an Asio steady_timer, not
// a poll) that wakes at the earliest due time and calls RunOnce().
//
// Lifetime: `clock`, `runner` and `gates` must outlive it, and it every pass it started (Stop asks
// them to return and waits up to its grace; WaitForPasses waits for the rest). Thread-safe.
// Stop() and the destructor must not run on one of the executor's threads.
class Scheduler {
 public:
  static constexpr std::size_t kDefaultMaxPasses = 1024;

  // `gates`: the participant hosts' gates (null: none). A held transaction whose own
  // look-again time comes while its gate still holds it (HostGates::Holds, asked under the
  // scheduler's lock) is not run, only re-armed for another such wait.
  Scheduler(const Clock& clock, asio::any_io_executor executor, PassRunner& runner,
            std::size_t max_passes = kDefaultMaxPasses, const calls::HostGates* gates = nullptr);
  // Stop(0), then waits for every started pass to finish: the executor must still be running.
  ~Scheduler();

  // Makes `gid` due at `due` (the earlier of this and any time it was already due at). If that
  // is now or past, starts it at once.
  void Schedule(const std::string& gid, TimePoint due);
  // Schedule() for a transaction found due in storage (the lease's poll), unless its last
  // pass ended held by a participant host's gate: its stored due time is past, but the gate
  // wakes it (with Schedule) when it may call.
  void ScheduleFound(const std::string& gid, TimePoint due);

  // Starts every transaction that is due and not running, within max_passes; returns how many.
  std::size_t RunOnce();

  // The right to run the next pass of one gid. A request that stores a change and then
  // drives the transaction takes it before its write, so that no other pass can run between
  // the write and its own pass, and the pass may start from what the request stored instead
  // of reading it back. Destroying an unused claim leaves the gid scheduled as it was.
  class PassClaim {
   public:
    PassClaim(PassClaim&& other) noexcept;
    PassClaim& operator=(PassClaim&&) = delete;
    ~PassClaim();

    // Runs the pass in the calling coroutine. `stored`, if given, must be the transaction
    // exactly as stored while this claim was held; otherwise the pass reads it.
    asio::awaitable<PassResult> RunHere(std::optional<storage::Transaction> stored = std::nullopt);
    // Starts the pass as a coroutine of its own (same `stored` contract).
    void RunInBackground(std::optional<storage::Transaction> stored = std::nullopt);

   private:
    friend class Scheduler;
    PassClaim(Scheduler& scheduler, std::string gid, std::optional<TimePoint> previous_due);

    Scheduler* scheduler_;  // null once used or moved from
    std::string gid_;
    std::optional<TimePoint> previous_due_;
  };

  // Claims `gid` once its running pass (if any) ends, waiting for it without holding a
  // thread. Nothing if that pass did not end within `max_wait` (by the clock's monotonic
  // reading, and an Asio timer while it waits), or the scheduler is stopping.
  // Claiming a gid that is not running never suspends.
  std::optional<PassClaim> TryClaim(const std::string& gid);
  asio::awaitable<std::optional<PassClaim>> Claim(std::string gid, Duration max_wait);

  // Claim(gid, max_wait) and RunHere(): for wait_result.
  asio::awaitable<std::optional<PassResult>> RunNow(std::string gid, Duration max_wait);

  void Start();
  // Stops starting passes, asks running ones to return early (their work stays stored and
  // resumes on the next start) and waits up to `grace` for them. Idempotent.
  void Stop(Duration grace);
  // Waits until no pass runs (after Stop, passes return at their next step).
  void WaitForPasses();

  // For tests and metrics.
  std::optional<TimePoint> DueTime(const std::string& gid) const;
  std::size_t Running() const;
  std::size_t Scheduled() const;  // transactions with a due time, not running

 private:
  struct Entry {
    std::optional<TimePoint> due;  // set while waiting in queue_
    bool running = false;
    std::optional<TimePoint> rerun;  // due time requested while running
    bool held = false;               // its last pass ended held by a host's gate
    Duration held_for{0};            // then: how long it waits before looking again itself
    // Called once the running pass ends (a claim waiting for it).
    std::vector<std::function<void()>> on_end;
  };

  asio::awaitable<PassResult> RunPass(std::string gid, std::optional<storage::Transaction> stored,
                                      bool counted);
  // Records the end of a pass; re-queues the gid if anything asked for more.
  void Finish(const std::string& gid, std::optional<TimePoint> next_due, bool counted, bool held);
  // Marks the entry running; returns the due time it had.
  std::optional<TimePoint> ClaimLocked(const std::string& gid, Entry& entry);
  asio::awaitable<void> TimerLoop();
  // Makes the timer look at the queue again (an earlier due time, a free slot, stopping).
  void Wake();

  const Clock& clock_;
  const asio::any_io_executor executor_;
  PassRunner& runner_;
  const std::size_t max_passes_;
  const calls::HostGates* const gates_;  // null: no gates

  mutable std::mutex mu_;
  std::condition_variable pass_done_cv_;
  std::unordered_map<std::string, Entry> entries_;
  std::set<std::pair<TimePoint, std::string>> queue_;  // (due, gid) of waiting entries
  std::size_t running_ = 0;                            // every pass
  std::size_t background_ = 0;  // the passes RunOnce started: what max_passes bounds
  bool stopping_ = false;
  bool started_ = false;
  bool timer_done_ = true;  // the timer loop is not running
  std::stop_source stop_source_;
  asio::strand<asio::any_io_executor> timer_strand_;
  asio::steady_timer timer_;
};

}  // namespace settle::drive
