#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "settle/core/clock.h"
#include "settle/core/periodic_thread.h"
#include "settle/sdk/idempotency_store.h"

namespace settle::sdk {

struct IdempotencyCleanerOptions {
  std::size_t batch_size = 1000;   // keys per delete transaction
  Duration interval{3600 * 1000};  // how often to look
};

// Deletes expired idempotency keys in the background, like BarrierCleaner: at Start(), then
// every interval, a batch per short transaction until none is left, so that the table stays
// bounded and the write lock is never held for long.
//
// Lifetime: `store` and `clock` must outlive it (Stop, or the destructor, ends its thread).
// Thread-safety: Start, Stop and CleanOnce from one thread.
class IdempotencyCleaner {
 public:
  IdempotencyCleaner(IdempotencyStore& store, const Clock& clock,
                     IdempotencyCleanerOptions options = {});
  ~IdempotencyCleaner();  // Stop()

  void Start();
  // Wakes the thread and joins it; a cleanup in progress finishes its current batch first.
  void Stop();

  // One round, on the caller's thread: what the background thread runs each interval.
  Result<std::size_t> CleanOnce();

  std::uint64_t deleted() const { return deleted_.load(std::memory_order_relaxed); }

 private:
  void CleanInBackground();

  IdempotencyStore& store_;
  const Clock& clock_;
  const IdempotencyCleanerOptions options_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> deleted_{0};
  PeriodicThread thread_;
};

}  // namespace settle::sdk
