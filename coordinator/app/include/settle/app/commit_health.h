#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "settle/core/clock.h"
#include "settle/storage/store_stats.h"

namespace settle::app {

// Whether the store's commits work, told to the log when that changes: a disk that fills, or
// a PostgreSQL that goes away, makes every change answer 503 with nothing logged unless
// someone says so. Fed the store's counters every second: the first failed commit after
// working ones is an error naming the cause (StoreStats::last_commit_failure), the first
// commit that works after failed ones says how many failed and for how long. Failures meanwhile
// are only counted (settle_store_failed_commits_total).
//
// Thread-safety: one thread.
class CommitHealth {
 public:
  struct Change {
    bool failing = false;  // started failing (an error), or works again
    std::string line;
  };

  // What changed since the last reading; nullopt when nothing did. The first reading is the
  // baseline.
  std::optional<Change> Observe(const storage::StoreStats& stats, TimePoint now);

 private:
  bool seen_ = false;
  std::uint64_t commits_ = 0;
  std::uint64_t failed_ = 0;
  bool failing_ = false;
  std::uint64_t failed_before_streak_ = 0;
  TimePoint since_{};
};

}  // namespace settle::app
