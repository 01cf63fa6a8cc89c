#include "settle/sdk/barrier_cleaner.h"

#include <cstdio>

namespace settle::sdk {

BarrierCleaner::BarrierCleaner(Barrier& barrier, BarrierCleanerOptions options)
    : barrier_(barrier), options_(options), thread_(options.interval, [this] { CleanOnce(); }) {}

BarrierCleaner::~BarrierCleaner() { Stop(); }

void BarrierCleaner::Start() { thread_.Start(); }

void BarrierCleaner::Stop() { thread_.Stop(); }

void BarrierCleaner::CleanOnce() {
  Result<std::size_t> deleted = barrier_.Cleanup(options_.retention, options_.batch_size);
  if (deleted) {
    deleted_.fetch_add(*deleted, std::memory_order_relaxed);
    return;
  }
  // The SDK has no logger of its own; stderr is where a service's operators look first.
  std::fprintf(stderr, "settle barrier cleanup failed, retrying in the next interval: %s\n",
               deleted.status().ToString().c_str());
}

}  // namespace settle::sdk
