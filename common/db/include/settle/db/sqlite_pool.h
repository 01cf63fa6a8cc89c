#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"

namespace settle::db {

struct SqlitePoolOptions {
  int busy_timeout_ms = 10'000;  // each connection's busy_timeout, and the wait for a write turn
  std::size_t max_idle_connections = 16;
};

// The connections to one SQLite file of a process (the SDK's barrier and idempotency stores):
// idle ones are reused, more are opened on demand, so that calls on many threads never share a
// connection; and the process's write transactions take turns before BEGIN IMMEDIATE. The
// SQLite side of PgPool. Thread-safe; connections must be released before the pool is
// destroyed.
class SqlitePool {
 public:
  SqlitePool(std::string path, SqlitePoolOptions options)
      : path_(std::move(path)), options_(options) {}

  // An idle connection, or a newly opened one (busy_timeout, synchronous=FULL).
  Result<std::unique_ptr<SqliteConnection>> Acquire();

  // Takes a connection back. It is kept for reuse only if it is healthy, outside any
  // transaction and the pool holds fewer than max_idle_connections; otherwise it is closed.
  void Release(std::unique_ptr<SqliteConnection> connection);

  // Write transactions of this process take turns here before BEGIN IMMEDIATE: a waiting
  // one is woken the moment the previous one ends, where SQLite's busy handler would sleep
  // and poll (milliseconds each time, under load). Other processes still meet the busy
  // handler. False if the turn did not come within busy_timeout_ms.
  bool EnterWrites();
  void LeaveWrites();
  // Turns asked for so far, granted or not.
  std::uint64_t WriteTurnsTaken();

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const SqlitePoolOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<SqliteConnection>> idle_;  // guarded by mutex_
  // Turns are served in arrival order (a ticket each), so none waits behind later arrivals.
  std::mutex turn_mutex_;
  std::condition_variable turn_cv_;
  std::uint64_t next_ticket_ = 0;        // guarded by turn_mutex_
  std::uint64_t serving_ = 0;            // guarded by turn_mutex_
  std::vector<std::uint64_t> given_up_;  // tickets whose holders timed out; guarded by turn_mutex_
};

}  // namespace settle::db
