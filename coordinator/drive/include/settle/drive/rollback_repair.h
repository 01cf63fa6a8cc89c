#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/drive/scheduler.h"
#include "settle/storage/store.h"

namespace settle::drive {

// Finds the failed TCC and XA transactions that a version with the timeout/registration race
// left with a registered branch never cancelled (rolled back), and not because an operator
// force-stopped them (Store::ListUndoneRollbacks), and hands each to the scheduler: its pass
// makes the missing calls and the status stays failed (two_phase_engine.h). Each is logged
// once per process.
//
// Stepwise: Sweep() looks once. The first sweep reads every failed transaction; later ones only
// those that finished since the sweep before, less a margin (an instance of an older version
// sharing the PostgreSQL database may still leave one, stamped by its own clock).
//
// Lifetime: `store`, `scheduler` and `clock` must outlive it. Thread-safety: Sweep from one
// thread at a time; the scheduler is thread-safe.
class RollbackRepair {
 public:
  RollbackRepair(storage::Store& store, Scheduler& scheduler, const Clock& clock);

  // Schedules what it finds; returns how many it found (logged or not).
  Result<std::size_t> Sweep();

  // How far back a later sweep looks before the start of the one before it.
  static constexpr Duration kMargin{10 * 60 * 1000};
  // Transactions read per query.
  static constexpr std::size_t kPage = 500;

 private:
  storage::Store& store_;
  Scheduler& scheduler_;
  const Clock& clock_;
  std::optional<TimePoint> last_sweep_;  // start of the last sweep that completed
  std::mutex mutex_;
  std::unordered_set<std::string> logged_;  // guarded by mutex_
};

}  // namespace settle::drive
