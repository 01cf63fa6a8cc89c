#pragma once

#include <optional>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/db/pg_pool.h"
#include "settle/storage/store.h"

namespace settle::storage {

// The read side of PostgresStore. Each read is one statement on a pooled connection, so it
// sees one snapshot that holds every commit that returned before it started.
//
// Lifetime: `pool` must outlive it. Thread-safety: every method from any thread.
class PgReader {
 public:
  explicit PgReader(db::PgPool& pool) : pool_(pool) {}

  Result<std::optional<Transaction>> Load(const std::string& gid);
  Result<ListPage> List(const ListQuery& query);
  Result<std::vector<DueEntry>> ListUnfinished();
  Result<std::vector<UnfinishedCount>> CountUnfinished();
  Result<std::vector<CreatorUsage>> UnfinishedUsage(const std::optional<std::string>& creator);
  Result<std::vector<std::string>> ListFinishedBefore(TimePoint cutoff, std::size_t limit);
  Result<std::vector<UndoneRollback>> ListUndoneRollbacks(TimePoint finished_since,
                                                          std::int64_t after_id, std::size_t limit);
  Result<std::vector<Subscriber>> Subscribers(const std::string& topic);
  Result<std::vector<Topic>> ListTopics();
  Result<AuditPage> ListAudit(const AuditQuery& query);
  Result<std::optional<BulkJob>> LoadJob(const std::string& id);
  Result<std::vector<BulkJob>> ListJobs(std::size_t limit, bool running_only);

 private:
  db::PgPool& pool_;
};

}  // namespace settle::storage
