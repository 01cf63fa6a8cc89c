#include "settle/sdk/idempotency_cleaner.h"

#include <cstdio>

#include "settle/core/delete_in_batches.h"

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
  // Stop() came first: no batch starts after it (DeleteInBatches asks only between batches).
  if (stopping_.load()) return std::size_t{0};
  BatchedDeletion done = DeleteInBatches(
      [&]() -> Result<std::size_t> {
        Result<std::size_t> deleted = store_.DeleteExpired(now, options_.batch_size);
        if (deleted) deleted_.fetch_add(*deleted, std::memory_order_relaxed);
        return deleted;
      },
      options_.batch_size, [&] { return stopping_.load(); });
  if (!done.status.ok()) return done.status;
  return done.deleted;
}

void IdempotencyCleaner::CleanInBackground() {
  Result<std::size_t> deleted = CleanOnce();
  if (deleted) return;
  // The SDK has no logger of its own; stderr is where a service's operators look first.
  std::fprintf(stderr, "settle idempotency cleanup failed, retrying in the next interval: %s\n",
               deleted.status().ToString().c_str());
}

}  // namespace settle::sdk
