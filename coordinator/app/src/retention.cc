#include "settle/app/retention.h"

#include <spdlog/spdlog.h>

namespace settle::coordinator {

Retention::Retention(storage::Store& store, const Clock& clock, RetentionSettings settings)
    : store_(store),
      clock_(clock),
      settings_(settings),
      thread_(settings.interval, [this] { DeleteBacklog(); }) {}

Retention::~Retention() { Stop(); }

Result<std::size_t> Retention::DeleteBatch() {
  if (settings_.keep.count() <= 0) return std::size_t{0};
  const TimePoint cutoff = clock_.Now() - settings_.keep;
  auto gids = store_.ListFinishedBefore(cutoff, settings_.batch_size);
  if (!gids) return gids.status();
  if (gids->empty()) return std::size_t{0};
  storage::WriteBatch batch;
  for (std::string& gid : *gids) batch.Add(storage::DeleteFinished{std::move(gid)});
  if (Status s = store_.Commit(batch); !s.ok()) return s;
  deleted_.fetch_add(gids->size(), std::memory_order_relaxed);
  return gids->size();
}

void Retention::Start() {
  if (settings_.keep.count() <= 0) return;
  spdlog::info("retention: deleting transactions finished more than {} ms ago, {} per commit",
               settings_.keep.count(), settings_.batch_size);
  thread_.Start();
}

void Retention::Stop() { thread_.Stop(); }

void Retention::DeleteBacklog() {
  std::size_t total = 0;
  for (;;) {
    Result<std::size_t> deleted = DeleteBatch();
    if (!deleted) {
      spdlog::warn("retention: cannot delete old transactions now: {}",
                   deleted.status().ToString());
      break;
    }
    total += *deleted;
    // A short batch means the backlog is gone; a full one, that more may wait.
    if (*deleted < settings_.batch_size || !thread_.Sleep(settings_.pause)) break;
  }
  if (total > 0) spdlog::info("retention: deleted {} finished transactions", total);
}

}  // namespace settle::coordinator
