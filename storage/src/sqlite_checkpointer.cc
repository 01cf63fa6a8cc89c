#include "sqlite_checkpointer.h"

#include <exception>
#include <utility>

#include "settle/core/thread_name.h"

namespace settle::storage {

Result<std::unique_ptr<SqliteCheckpointer>> SqliteCheckpointer::Start(const std::string& path,
                                                                      int busy_timeout_ms) {
  Result<std::unique_ptr<db::SqliteConnection>> connection =
      db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE, busy_timeout_ms);
  if (!connection) return connection.status();
  if (Status s = (*connection)->Exec("PRAGMA synchronous = FULL"); !s.ok()) return s;
  auto checkpointer =
      std::unique_ptr<SqliteCheckpointer>(new SqliteCheckpointer(std::move(connection).value()));
  try {
    checkpointer->thread_ = std::thread([c = checkpointer.get()] {
      NameThisThread("settle-ckpt");
      c->Loop();
    });
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("starting the sqlite checkpoint thread: ") + e.what());
  }
  return checkpointer;
}

SqliteCheckpointer::SqliteCheckpointer(std::unique_ptr<db::SqliteConnection> connection)
    : connection_(std::move(connection)) {}

SqliteCheckpointer::~SqliteCheckpointer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void SqliteCheckpointer::Request() {
  // The writer calls this after every commit while the WAL is long: the flag keeps that to
  // one atomic exchange unless the thread actually needs waking.
  if (requested_.exchange(true, std::memory_order_acq_rel)) return;
  std::lock_guard lock(mutex_);
  wake_.notify_one();
}

void SqliteCheckpointer::Loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || requested_.load(std::memory_order_acquire); });
      if (stopping_) return;
    }
    requested_.store(false, std::memory_order_release);
    // PASSIVE takes no lock that the writer or the readers need. A failure (SQLITE_BUSY: the
    // writer's own checkpoint is running; or an I/O error) leaves the frames in the WAL, where
    // they are safe, for the next request or the writer's fallback.
    const int rc = sqlite3_wal_checkpoint_v2(connection_->handle(), nullptr,
                                             SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    if (rc == SQLITE_OK) checkpoints_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace settle::storage
