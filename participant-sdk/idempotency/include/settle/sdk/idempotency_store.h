#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/sdk/barrier_store.h"

namespace settle::sdk {

// A row of the `idempotency_key` table: one Idempotency-Key a client sent to one of the
// service's own entry points, and what became of it.
struct IdempotencyRecord {
  enum class State { kInProgress, kDone };

  // The Idempotency-Key as sent; when keys are scoped by caller (IdempotencyOptions::
  // caller_of, and always for issued tokens), the caller's scope, '/', and the key.
  std::string key;
  std::string fingerprint;  // hex SHA-256 of "method\npath\nbody" (see RequestFingerprint)
  State state = State::kInProgress;
  // kInProgress: who claimed the key and until when the claim holds. A claim whose owner died
  // (the process crashed before its handler committed) is taken over once lease_until passes.
  std::string owner;
  TimePoint lease_until;
  // kDone: the stored answer.
  int status = 0;
  std::string content_type;
  std::string body;
  TimePoint create_time;
  TimePoint expires;  // after this the key is forgotten: a new request with it runs again
};

// A token an IdempotencyGuard issued (IdempotencyMode::kIssuedToken) that no request has used
// yet: a row of the `idempotency_token` table. The request that uses it deletes it in its own
// transaction, and its answer is kept as an IdempotencyRecord from then on.
struct IssuedToken {
  std::string token;   // 32 random hex digits
  std::string caller;  // the scope of the caller it was issued to (see IdempotencyOptions)
  TimePoint expires;   // unused after this, it is refused, and the cleaner deletes it
};

// Where an IdempotencyGuard keeps its keys: the participant's own database, beside its
// business tables, so that a handler's writes and its stored answer commit in one local
// transaction (a BarrierTransaction of the store the business code already uses). Thread-safe.
class IdempotencyStore {
 public:
  virtual ~IdempotencyStore() = default;

  // A local transaction on the participant's database (BEGIN IMMEDIATE on SQLite).
  virtual Result<std::unique_ptr<BarrierTransaction>> Begin() = 0;

  // The committed record of `key`, read without the write lock and outside any transaction:
  // what lets a duplicate see an in-progress claim while its handler's transaction is open.
  virtual Result<std::optional<IdempotencyRecord>> Peek(const std::string& key) = 0;

  // The record of `key` as `tx` sees it.
  virtual Result<std::optional<IdempotencyRecord>> Find(BarrierTransaction& tx,
                                                        const std::string& key) = 0;
  // Inserts `record`, or replaces the record with its key.
  virtual Status Put(BarrierTransaction& tx, const IdempotencyRecord& record) = 0;
  // Deletes the record of `key` if it is still an in-progress claim of `owner`; true if it did.
  virtual Result<bool> DeleteClaim(BarrierTransaction& tx, const std::string& key,
                                   const std::string& owner) = 0;

  // Inserts an issued token.
  virtual Status PutToken(BarrierTransaction& tx, const IssuedToken& token) = 0;
  // The unused token `token` as `tx` sees it.
  virtual Result<std::optional<IssuedToken>> FindToken(BarrierTransaction& tx,
                                                       const std::string& token) = 0;
  // Deletes the token (it has been used); true if it was there.
  virtual Result<bool> DeleteToken(BarrierTransaction& tx, const std::string& token) = 0;

  // Deletes at most `limit` records and unused tokens that expired before `now`, in one short
  // transaction; returns how many it deleted.
  virtual Result<std::size_t> DeleteExpired(TimePoint now, std::size_t limit) = 0;
};

}  // namespace settle::sdk
