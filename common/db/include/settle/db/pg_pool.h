#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/db/pg_connection.h"

namespace settle::db {

// Connections to one PostgreSQL database, opened on demand and reused. At most `max_idle` are
// kept open between uses; more may be open at once while that many callers need one.
//
// Thread-safety: every method from any thread.
class PgPool {
 public:
  PgPool(std::string conninfo, std::size_t max_idle)
      : conninfo_(std::move(conninfo)), max_idle_(max_idle) {}

  // A connection borrowed for one scope; back to the pool when destroyed, outside any
  // transaction.
  class Lease {
   public:
    Lease(PgPool& pool, std::unique_ptr<PgConnection> connection)
        : pool_(pool), connection_(std::move(connection)) {}
    ~Lease() {
      if (connection_->InTransaction()) connection_->Run("ROLLBACK").IgnoreError();
      pool_.Release(std::move(connection_));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    PgConnection& operator*() { return *connection_; }
    PgConnection* operator->() { return connection_.get(); }

   private:
    PgPool& pool_;
    std::unique_ptr<PgConnection> connection_;
  };

  Result<std::unique_ptr<Lease>> Acquire() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        auto lease = std::make_unique<Lease>(*this, std::move(idle_.back()));
        idle_.pop_back();
        return lease;
      }
    }
    // Connected outside the lock: connecting takes a round trip or more.
    Result<std::unique_ptr<PgConnection>> opened = PgConnection::Open(conninfo_);
    if (!opened) return opened.status();
    return std::make_unique<Lease>(*this, std::move(opened).value());
  }

 private:
  void Release(std::unique_ptr<PgConnection> connection) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < max_idle_) idle_.push_back(std::move(connection));
  }

  const std::string conninfo_;
  const std::size_t max_idle_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<PgConnection>> idle_;  // guarded by mutex_
};

}  // namespace settle::db
