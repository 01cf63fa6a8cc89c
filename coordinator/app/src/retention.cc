#include "settle/app/retention.h"

#include <spdlog/spdlog.h>

#include "settle/core/delete_in_batches.h"

namespace settle::app {

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
  if (gids->empty()) {
    // The audit trail and finished bulk jobs are kept as long as transactions: what is older
    // goes once the backlog of transactions is gone (a few rows: operators' actions).
    storage::WriteBatch audit;
    audit.Add(storage::DeleteAuditBefore{cutoff});
    audit.Add(storage::DeleteJobsBefore{cutoff});
    if (Status s = store_.Commit(audit); !s.ok()) return s;
    return std::size_t{0};
  }
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
  // A full batch means more may wait: pause, to leave the writer to the live traffic, unless
  // Stop() wakes the pause.
  BatchedDeletion done = DeleteInBatches([this] { return DeleteBatch(); }, settings_.batch_size,
                                         [this] { return !thread_.Sleep(settings_.pause); });
  if (!done.status.ok()) {
    spdlog::warn("retention: cannot delete old transactions now: {}", done.status.ToString());
  }
  if (done.deleted > 0) spdlog::info("retention: deleted {} finished transactions", done.deleted);
}

}  // namespace settle::app
