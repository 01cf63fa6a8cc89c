#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "settle/common/sqlite_connection.h"
#include "settle/common/status.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::sdk {

// The connections of one SqliteBarrierStore: idle ones are reused, more are opened on demand,
// so that guarded calls on many threads never share a connection. Thread-safe.
class SqliteConnectionPool {
 public:
  SqliteConnectionPool(std::string path, SqliteBarrierOptions options)
      : path_(std::move(path)), options_(options) {}

  // An idle connection, or a newly opened one (busy_timeout, synchronous=FULL).
  Result<std::unique_ptr<SqliteConnection>> Acquire();

  // Takes a connection back. It is kept for reuse only if it is healthy, outside any
  // transaction and the pool holds fewer than max_idle_connections; otherwise it is closed.
  void Release(std::unique_ptr<SqliteConnection> connection);

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const SqliteBarrierOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<SqliteConnection>> idle_;  // guarded by mutex_
};

}  // namespace settle::sdk
