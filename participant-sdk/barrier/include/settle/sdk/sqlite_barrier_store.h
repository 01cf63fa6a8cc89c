#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "settle/sdk/barrier_store.h"

namespace settle::sdk {

struct SqliteBarrierOptions {
  int busy_timeout_ms = 10'000;
  std::size_t max_idle_connections = 16;
};

// The barrier in the participant's own SQLite database file (WAL, synchronous=FULL). Open
// creates the file and the `barrier` table if needed; the participant's business tables live
// in the same file, so that its changes and the barrier rows share one local transaction.
// Every transaction starts with BEGIN IMMEDIATE, so two racing calls for one branch run one
// after the other. Thread-safe: each transaction borrows a connection from a pool.
class SqliteBarrierStore final : public BarrierStore {
 public:
  static Result<std::unique_ptr<SqliteBarrierStore>> Open(const std::string& path,
                                                          SqliteBarrierOptions options = {});
  ~SqliteBarrierStore() override;

  Result<std::unique_ptr<BarrierTransaction>> Begin() override;
  Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) override;

  // The SQLite connection of a transaction this store began, for the business code's own
  // statements inside it; nullptr for a transaction from another store.
  static sqlite3* Connection(BarrierTransaction& tx);

  // Write transactions of this process that have asked for their turn so far (see
  // SqliteBarrierOptions): what a test watches to know that a transaction is waiting.
  std::uint64_t WriteTurnsTaken() const;

  class Impl;

 private:
  explicit SqliteBarrierStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::sdk
