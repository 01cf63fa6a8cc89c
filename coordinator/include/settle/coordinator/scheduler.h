#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "settle/common/clock.h"
#include "settle/coordinator/executor.h"
#include "settle/coordinator/pass_runner.h"

namespace settle::coordinator {

// Knows when each unfinished transaction is next due and hands due ones to the executor,
// one pass at a time per gid: a transaction that becomes due while its pass runs is re-armed
// and runs again afterwards, never twice at once.
//
// Stepwise: RunOnce() dispatches what is due now and returns, so tests drive it with a fake
// clock and an inline executor. Start() adds a background thread that sleeps until the
// earliest due time (a timer, not a poll) and calls RunOnce().
//
// Thread-safe.
class Scheduler {
 public:
  Scheduler(const Clock& clock, Executor& executor, PassRunner& runner);
  // Stops, then waits for every dispatched pass to finish: the executor must still be able to
  // run the passes it was given.
  ~Scheduler();

  // Makes `gid` due at `due` (the earlier of this and any time it was already due at). If that
  // is now or past, dispatches at once.
  void Schedule(const std::string& gid, TimePoint due);

  // Dispatches every transaction that is due and not running; returns how many.
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

    // Runs the pass on the calling thread. `stored`, if given, must be the transaction exactly
    // as stored while this claim was held; otherwise the pass reads it.
    PassResult RunHere(std::optional<storage::Transaction> stored = std::nullopt);
    // Hands the pass to the executor (same `stored` contract).
    void RunInBackground(std::optional<storage::Transaction> stored = std::nullopt);

   private:
    friend class Scheduler;
    PassClaim(Scheduler& scheduler, std::string gid, std::optional<TimePoint> previous_due);

    Scheduler* scheduler_;  // null once used or moved from
    std::string gid_;
    std::optional<TimePoint> previous_due_;
  };

  // Claims `gid` once its running pass (if any) ends. Nothing if that pass did not end within
  // `max_wait`, or the scheduler is stopping.
  std::optional<PassClaim> Claim(const std::string& gid, Duration max_wait);

  // Claim(gid, max_wait) and RunHere(): for wait_result.
  std::optional<PassResult> RunNow(const std::string& gid, Duration max_wait);

  void Start();
  // Stops dispatching, asks running passes to return early (their work stays stored and
  // resumes on the next start) and waits up to `grace` for them. Idempotent.
  void Stop(Duration grace);

  // For tests and metrics.
  std::optional<TimePoint> DueTime(const std::string& gid) const;
  std::size_t Running() const;
  std::size_t Scheduled() const;  // transactions with a due time, not running

 private:
  struct Entry {
    std::optional<TimePoint> due;  // set while waiting in queue_
    bool running = false;
    std::optional<TimePoint> rerun;  // due time requested while running
  };

  PassResult RunPass(const std::string& gid, std::optional<storage::Transaction> stored);
  // Records the end of a pass; re-queues the gid if anything asked for more.
  void Finish(const std::string& gid, std::optional<TimePoint> next_due);
  // Marks the entry running; returns the due time it had.
  std::optional<TimePoint> ClaimLocked(const std::string& gid, Entry& entry);
  void TimerLoop();

  const Clock& clock_;
  Executor& executor_;
  PassRunner& runner_;

  mutable std::mutex mu_;
  std::condition_variable timer_cv_;  // the earliest due time changed, or stopping
  std::condition_variable pass_done_cv_;
  std::unordered_map<std::string, Entry> entries_;
  std::set<std::pair<TimePoint, std::string>> queue_;  // (due, gid) of waiting entries
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::stop_source stop_source_;
  std::thread timer_thread_;
};

}  // namespace settle::coordinator
