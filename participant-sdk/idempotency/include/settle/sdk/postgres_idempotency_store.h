#pragma once

#include <memory>

#include "settle/sdk/idempotency_store.h"
#include "settle/sdk/postgres_barrier_store.h"

namespace settle::sdk {

// The `idempotency_key` and `idempotency_token` tables in the participant's PostgreSQL database, in
// the transactions of the PostgresBarrierStore that the business code uses: a handler's statements
// (on PostgresBarrierStore::Connection(tx)) and its stored answer commit together. Open creates the
// tables if needed, under an advisory lock. Find takes a transaction-scoped advisory lock on the
// key first, so that of two transactions that both find no row the later waits and then sees the
// earlier's; Peek is a plain READ COMMITTED read, which no open transaction blocks. Thread-safe.
class PostgresIdempotencyStore final : public IdempotencyStore {
 public:
  // `barrier` must outlive the store.
  static Result<std::unique_ptr<PostgresIdempotencyStore>> Open(PostgresBarrierStore& barrier);

  Result<std::unique_ptr<BarrierTransaction>> Begin() override;
  Result<std::optional<IdempotencyRecord>> Peek(const std::string& key) override;
  Result<std::optional<IdempotencyRecord>> Find(BarrierTransaction& tx,
                                                const std::string& key) override;
  Status Put(BarrierTransaction& tx, const IdempotencyRecord& record) override;
  Result<bool> DeleteClaim(BarrierTransaction& tx, const std::string& key,
                           const std::string& owner) override;
  Status PutToken(BarrierTransaction& tx, const IssuedToken& token) override;
  Result<std::optional<IssuedToken>> FindToken(BarrierTransaction& tx,
                                               const std::string& token) override;
  Result<bool> DeleteToken(BarrierTransaction& tx, const std::string& token) override;
  Result<std::size_t> DeleteExpired(TimePoint now, std::size_t limit) override;

 private:
  explicit PostgresIdempotencyStore(PostgresBarrierStore& barrier) : barrier_(barrier) {}
  PostgresBarrierStore& barrier_;
};

}  // namespace settle::sdk
