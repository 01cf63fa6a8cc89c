#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "settle/db/pg_connection.h"
#include "settle/sdk/barrier_store.h"

namespace settle::sdk {

struct PostgresBarrierOptions {
  std::size_t max_idle_connections = 16;
};

// The barrier in the participant's own PostgreSQL database: the `barrier` table beside the
// participant's business tables, so that its changes and the barrier rows share one local
// transaction. Open creates the table if needed (under an advisory lock, so that several
// participant processes may start together).
//
// Transactions run at READ COMMITTED on pooled connections. Two racing calls for one branch
// meet on the barrier's primary key: the later INSERT ... ON CONFLICT DO NOTHING waits until
// the earlier transaction ends and then sees its row, so the business code runs once. Commits
// are synchronous_commit = on whatever the server's default: a SUCCESS is on disk.
// Thread-safe: each transaction borrows its own connection.
class PostgresBarrierStore final : public BarrierStore {
 public:
  // `conninfo`: a postgresql:// URL or libpq's key=value form.
  static Result<std::unique_ptr<PostgresBarrierStore>> Open(const std::string& conninfo,
                                                            PostgresBarrierOptions options = {});
  ~PostgresBarrierStore() override;

  Result<std::unique_ptr<BarrierTransaction>> Begin() override;
  Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) override;

  // The connection of a transaction this store began, for the business code's own statements
  // inside it; nullptr for a transaction from another store.
  static db::PgConnection* Connection(BarrierTransaction& tx);

  class Impl;

 private:
  explicit PostgresBarrierStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::sdk
