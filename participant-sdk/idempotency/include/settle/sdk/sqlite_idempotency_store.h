#pragma once

#include <memory>
#include <string>

#include "settle/sdk/idempotency_store.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::sdk {

// The `idempotency_key` and `idempotency_token` tables in the participant's SQLite file, in the
// transactions of the SqliteBarrierStore that the business code uses: a handler's statements (on
// SqliteBarrierStore::Connection(tx)) and its stored answer commit together. Open creates the
// tables if needed. Peek reads through a connection of its own, which WAL lets read the last
// commit while another connection holds the write lock. Thread-safe.
class SqliteIdempotencyStore final : public IdempotencyStore {
 public:
  // `path` is the file `barrier` was opened on; `barrier` must outlive the store.
  static Result<std::unique_ptr<SqliteIdempotencyStore>> Open(const std::string& path,
                                                              SqliteBarrierStore& barrier);
  ~SqliteIdempotencyStore() override;

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

  class Impl;

 private:
  explicit SqliteIdempotencyStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::sdk
