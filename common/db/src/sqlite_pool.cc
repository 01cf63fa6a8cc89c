#include "settle/db/sqlite_pool.h"

namespace settle::db {

Result<std::unique_ptr<SqliteConnection>> SqlitePool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<SqliteConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  // Opening touches the file system: done outside the lock so that other threads keep going.
  auto opened = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                       options_.busy_timeout_ms);
  if (!opened) return opened.status();
  // synchronous is per connection: every commit must be on disk before the caller answers
  // (a barrier row: or a crash could let a delivered cancel be forgotten).
  if (Status s = (*opened)->Exec("PRAGMA synchronous=FULL"); !s.ok()) return s;
  return opened;
}

void SqlitePool::Release(std::unique_ptr<SqliteConnection> connection) {
  if (connection == nullptr || connection->broken() || connection->InTransaction()) return;
  std::unique_ptr<SqliteConnection> surplus;  // closed after the lock is released
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < options_.max_idle_connections) {
      idle_.push_back(std::move(connection));
    } else {
      surplus = std::move(connection);
    }
  }
}

bool SqlitePool::EnterWrites() {
  std::unique_lock lock(turn_mutex_);
  const std::uint64_t ticket = next_ticket_++;
  const bool turn = turn_cv_.wait_for(lock, std::chrono::milliseconds(options_.busy_timeout_ms),
                                      [&] { return serving_ == ticket; });
  if (turn) return true;
  // Leaving the queue: the turn passes over this ticket when it comes.
  given_up_.push_back(ticket);
  return false;
}

std::uint64_t SqlitePool::WriteTurnsTaken() {
  std::lock_guard lock(turn_mutex_);
  return next_ticket_;
}

void SqlitePool::LeaveWrites() {
  {
    std::lock_guard lock(turn_mutex_);
    ++serving_;
    for (auto it = given_up_.begin(); it != given_up_.end();) {
      if (*it == serving_) {
        ++serving_;
        given_up_.erase(it);
        it = given_up_.begin();
      } else {
        ++it;
      }
    }
  }
  turn_cv_.notify_all();
}

}  // namespace settle::db
