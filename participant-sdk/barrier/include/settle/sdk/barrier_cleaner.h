#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "settle/core/clock.h"
#include "settle/core/periodic_thread.h"
#include "settle/sdk/barrier.h"

namespace settle::sdk {

struct BarrierCleanerOptions {
  // Barrier rows are deleted once they are this old: well beyond the coordinator's
  // timeout_to_fail and its longest retry, so that no call of their branch can still arrive.
  Duration retention{7LL * 24 * 3600 * 1000};
  std::size_t batch_size = 1000;   // rows per delete transaction
  Duration interval{3600 * 1000};  // how often to look
};

// Runs Barrier::Cleanup in the background: at Start(), then every interval, so that the
// barrier table stays bounded as the coordinator's retention keeps its logs bounded.
//
// Lifetime: `barrier` must outlive it (Stop, or the destructor, ends its thread).
// Thread-safety: Start and Stop from one thread.
class BarrierCleaner {
 public:
  BarrierCleaner(Barrier& barrier, BarrierCleanerOptions options = {});
  ~BarrierCleaner();  // Stop()

  void Start();
  // Wakes the thread and joins it; a cleanup in progress finishes its current batch first.
  void Stop();

  std::uint64_t deleted() const { return deleted_.load(std::memory_order_relaxed); }

 private:
  void CleanOnce();

  Barrier& barrier_;
  const BarrierCleanerOptions options_;
  std::atomic<std::uint64_t> deleted_{0};
  PeriodicThread thread_;
};

}  // namespace settle::sdk
