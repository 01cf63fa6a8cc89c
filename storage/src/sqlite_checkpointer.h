#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"

namespace settle::storage {

// Copies the WAL back into the database file on a connection and thread of its own, so that
// the group-commit writer never stops to do it.
//
// SQLite's default is to checkpoint inside the COMMIT that pushes the WAL past 1000 pages: that
// commit, and every caller queued behind it, waits while thousands of pages are copied and the
// database file is synced. A PASSIVE checkpoint here runs beside the writer instead (WAL mode
// lets both proceed); it copies the frames committed before it started.
//
// Thread-safety: Request() from any thread; the destructor from one.
class SqliteCheckpointer {
 public:
  // Opens its own read-write connection to `path` (synchronous=FULL: the database file is
  // synced before the WAL may be reused) and starts the thread.
  static Result<std::unique_ptr<SqliteCheckpointer>> Start(const std::string& path,
                                                           int busy_timeout_ms);

  // Stops the thread (after the checkpoint in progress, if any) and closes the connection.
  ~SqliteCheckpointer();
  SqliteCheckpointer(const SqliteCheckpointer&) = delete;
  SqliteCheckpointer& operator=(const SqliteCheckpointer&) = delete;

  // Asks for a checkpoint soon. Never blocks; requests made while one is pending are one.
  void Request();

  // Checkpoints that succeeded so far (including ones that found nothing to copy).
  std::uint64_t checkpoints() const { return checkpoints_.load(std::memory_order_relaxed); }

 private:
  explicit SqliteCheckpointer(std::unique_ptr<db::SqliteConnection> connection);
  void Loop();

  std::unique_ptr<db::SqliteConnection> connection_;
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
  std::atomic<std::uint64_t> checkpoints_{0};
};

}  // namespace settle::storage
