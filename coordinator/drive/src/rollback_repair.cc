#include "settle/drive/rollback_repair.h"

#include <spdlog/spdlog.h>

namespace settle::drive {

RollbackRepair::RollbackRepair(storage::Store& store, Scheduler& scheduler, const Clock& clock)
    : store_(store), scheduler_(scheduler), clock_(clock) {}

Result<std::size_t> RollbackRepair::Sweep() {
  const TimePoint started = clock_.Now();
  const TimePoint since = last_sweep_ ? *last_sweep_ - kMargin : FromUnixMillis(0);
  std::size_t found = 0;
  std::int64_t after_id = 0;
  for (;;) {
    auto page = store_.ListUndoneRollbacks(since, after_id, kPage);
    if (!page) return page.status();
    for (const storage::UndoneRollback& undone : *page) {
      bool first = false;
      {
        std::lock_guard lock(mutex_);
        first = logged_.insert(undone.gid).second;
      }
      if (first) {
        spdlog::warn(
            "gid={} ended failed with a registered branch never cancelled (left by an earlier "
            "version's timeout/registration race): making the missing calls; it stays failed",
            undone.gid);
      }
      scheduler_.Schedule(undone.gid, clock_.Now());
      after_id = undone.id;
      ++found;
    }
    if (page->size() < kPage) break;
  }
  last_sweep_ = started;
  return found;
}

}  // namespace settle::drive
