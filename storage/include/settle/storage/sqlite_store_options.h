#pragma once

#include <chrono>
#include <cstddef>

#include "settle/core/clock.h"

// How the embedded store commits and checkpoints (SqliteStore, and its writer inside storage).
namespace settle::storage {

struct SqliteStoreOptions {
  // Most callers' batches folded into one SQLite transaction (one fsync).
  std::size_t max_batches_per_commit = 1024;
  // How long the writer waits for more callers before a commit when callers were already
  // queued at the end of the previous one (steady load); never when the store is idle. Fewer,
  // larger groups mean fewer fsyncs, which can help when the disk is shared with processes
  // that sync too, at the price of latency: off (0) by default.
  std::chrono::microseconds commit_delay{0};
  int busy_timeout_ms = 5000;
  // WAL length (in pages) after which a background thread copies the WAL back into the
  // database file, off the commit path: once per this many pages appended.
  int checkpoint_pages = 1000;
  // WAL length at which the writer checkpoints itself after a commit, as SQLite does by
  // default. Under steady load the background checkpoint never sees the WAL's end (new frames
  // keep arriving), and the WAL may only start over once every frame is copied: this bounds
  // its size, and the writer then only copies what the background left.
  int writer_checkpoint_pages = 16000;
  // Measures how long commits take (StoreStats::commit_time), with its monotonic reading; the
  // store never reads the time otherwise. Null: a SystemClock. Must outlive the store.
  const Clock* clock = nullptr;
};

}  // namespace settle::storage
