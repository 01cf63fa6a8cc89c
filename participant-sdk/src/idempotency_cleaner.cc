#include "settle/sdk/idempotency_cleaner.h"

#include <cstdio>

namespace settle::sdk {

IdempotencyCleaner::IdempotencyCleaner(IdempotencyStore& store, const Clock& clock,
                                       IdempotencyCleanerOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      thread_(options.interval, [this] { CleanInBackground(); }) {}

IdempotencyCleaner::~IdempotencyCleaner() { Stop(); }

void IdempotencyCleaner::Start() {
  stopping_ = false;
  thread_.Start();
}

void IdempotencyCleaner::Stop() {
  stopping_ = true;
  thread_.Stop();
}

Result<std::size_t> IdempotencyCleaner::CleanOnce() {
  const TimePoint now = clock_.Now();
  std::size_t total = 0;
  while (!stopping_.load()) {
    Result<std::size_t> deleted = store_.DeleteExpired(now, options_.batch_size);
    if (!deleted) return deleted.status();
    total += *deleted;
    deleted_.fetch_add(*deleted, std::memory_order_relaxed);
    if (*deleted < options_.batch_size) break;
  }
  return total;
}

void IdempotencyCleaner::CleanInBackground() {
  Result<std::size_t> deleted = CleanOnce();
  if (deleted) return;
  // The SDK has no logger of its own; stderr is where a service's operators look first.
  std::fprintf(stderr, "settle idempotency cleanup failed, retrying in the next interval: %s\n",
               deleted.status().ToString().c_str());
}

}  // namespace settle::sdk
