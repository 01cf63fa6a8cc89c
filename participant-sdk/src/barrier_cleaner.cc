#include "settle/sdk/barrier_cleaner.h"

#include <cstdio>

namespace settle::sdk {

BarrierCleaner::BarrierCleaner(Barrier& barrier, BarrierCleanerOptions options)
    : barrier_(barrier), options_(options) {}

BarrierCleaner::~BarrierCleaner() { Stop(); }

void BarrierCleaner::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void BarrierCleaner::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BarrierCleaner::Loop() {
  std::unique_lock lock(mutex_);
  do {
    lock.unlock();
    Result<std::size_t> deleted = barrier_.Cleanup(options_.retention, options_.batch_size);
    if (deleted) {
      deleted_.fetch_add(*deleted, std::memory_order_relaxed);
    } else {
      // The SDK has no logger of its own; stderr is where a service's operators look first.
      std::fprintf(stderr, "settle barrier cleanup failed, retrying in the next interval: %s\n",
                   deleted.status().ToString().c_str());
    }
    lock.lock();
  } while (!wake_.wait_for(lock, options_.interval, [this] { return stopping_; }));
}

}  // namespace settle::sdk
