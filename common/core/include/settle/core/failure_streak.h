#pragma once

#include <atomic>
#include <cstdint>

namespace settle {

// One repeated operation's failures told twice: when they start and when they end. A database
// that is down fails every poll, and a line per failure (five a second) buries the two lines
// an operator needs: "it started failing, because ..." and "it works again, after N".
//
//   if (!renewed.ok()) { if (streak.Failed()) log.error(...); }
//   else if (const auto n = streak.Succeeded(); n > 0) log.warn("... again after {} failures", n);
//
// Thread-safety: any thread.
class FailureStreak {
 public:
  // True for the failure that starts a streak (the one to log), false for the rest.
  bool Failed() { return failures_.fetch_add(1, std::memory_order_relaxed) == 0; }
  // The failures of the streak this success ends; 0 when none was under way.
  std::uint64_t Succeeded() { return failures_.exchange(0, std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> failures_{0};
};

}  // namespace settle
