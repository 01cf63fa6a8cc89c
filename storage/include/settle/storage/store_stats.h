#pragma once

#include <cstdint>
#include <string>

#include "settle/metrics/histogram.h"
#include "settle/metrics/latency_histogram.h"

namespace settle::storage {

// A store's counters for metrics and the benchmark; monotonically increasing.
struct StoreStats {
  // Group commit (every store).
  std::uint64_t commits = 0;  // database transactions committed (one sync each)
  std::uint64_t batches = 0;  // caller batches applied (committed or refused)
  std::uint64_t failed_commits = 0;
  std::string last_commit_failure;        // why the newest failed commit failed; empty if none has
  std::uint64_t commit_micros_total = 0;  // time spent from BEGIN to COMMIT
  metrics::LatencyHistogram::Snapshot commit_time;  // of every commit, committed or failed
  metrics::Histogram::Snapshot batches_per_commit;  // callers' batches in each committed group
  std::uint64_t delayed_commits = 0;                // commits that waited commit_delay for company

  // SQLite's write-ahead log (zero for other stores).
  std::uint64_t wal_pages_written = 0;  // WAL frames appended by commits
  std::uint64_t background_checkpoints = 0;
  std::uint64_t writer_checkpoints = 0;
};

}  // namespace settle::storage
