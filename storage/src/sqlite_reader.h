#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"
#include "settle/storage/store.h"

namespace settle::storage {

// The read side of SqliteStore: a pool of read-only connections, opened on demand and reused,
// each with its own statement cache. In WAL mode they read while the writer writes, and every
// read starts a fresh snapshot, so it sees every commit that returned before it started.
//
// Thread-safety: every method may be called from any thread; each call borrows a connection
// of its own for its duration.
class SqliteReader {
 public:
  SqliteReader(std::string path, int busy_timeout_ms);
  ~SqliteReader();
  SqliteReader(const SqliteReader&) = delete;
  SqliteReader& operator=(const SqliteReader&) = delete;

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
  class Lease;

  Result<std::unique_ptr<db::SqliteConnection>> Acquire();
  void Release(std::unique_ptr<db::SqliteConnection> connection);

  const std::string path_;
  const int busy_timeout_ms_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<db::SqliteConnection>> idle_;  // guarded by mutex_
};

}  // namespace settle::storage
