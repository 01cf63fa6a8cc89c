#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "settle/core/clock.h"
#include "settle/core/periodic_thread.h"
#include "settle/core/status.h"
#include "settle/storage/store.h"

namespace settle::app {

struct RetentionSettings {
  // Finished transactions are deleted once they have been finished this long; 0 keeps them
  // forever (retention off).
  Duration keep{0};
  // Transactions deleted per commit: bounds how long one delete holds the writer.
  std::size_t batch_size = 500;
  // How often the background thread looks for old transactions.
  Duration interval{60000};
  // The pause between two full batches, so that deleting a large backlog leaves the writer
  // to the live traffic most of the time.
  Duration pause{50};
};

// Deletes finished transactions older than the retention, in bounded batches.
//
// Stepwise: DeleteBatch() deletes one batch and returns how many it deleted, so that tests
// drive it with a fake clock. Start() adds a background thread that, every interval, deletes
// batches until one comes back short.
//
// Lifetime: `store` and `clock` must outlive it (Stop, or the destructor, ends its thread).
// Thread-safety: DeleteBatch from any thread; Start and Stop from one.
class Retention {
 public:
  Retention(storage::Store& store, const Clock& clock, RetentionSettings settings);
  ~Retention();  // Stop()

  // Deletes up to batch_size transactions finished before now - keep, in one commit.
  Result<std::size_t> DeleteBatch();

  // Starts the background thread, unless retention is off.
  void Start();
  void Stop();

  std::uint64_t deleted() const { return deleted_.load(std::memory_order_relaxed); }

 private:
  // One round of the background thread: batches until one comes back short.
  void DeleteBacklog();

  storage::Store& store_;
  const Clock& clock_;
  const RetentionSettings settings_;
  std::atomic<std::uint64_t> deleted_{0};
  PeriodicThread thread_;
};

}  // namespace settle::app
