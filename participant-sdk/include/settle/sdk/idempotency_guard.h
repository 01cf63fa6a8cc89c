#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/idempotency_store.h"
#include "settle/sdk/participant.h"

namespace settle::sdk {

struct IdempotencyOptions {
  // Without an Idempotency-Key a request is refused with 400 (true) or runs unguarded (false).
  bool key_required = true;
  // How long a key is remembered after its first request: a repeat within it gets the stored
  // answer, one after it runs again. IdempotencyCleaner deletes expired keys.
  Duration expiry{24LL * 3600 * 1000};
  // How long a claim holds while its handler runs: longer than the slowest handler. A process
  // that dies mid-handler leaves its claim, and repeats get 409 until the lease runs out; then
  // the next repeat runs the handler.
  Duration lease{60 * 1000};
  int retry_after_seconds = 1;  // the Retry-After of a 409
  std::size_t max_key_length = 255;
};

// The handler of a guarded entry point: its writes go through `tx` (SqliteBarrierStore::
// Connection(tx), PostgresBarrierStore::Connection(tx)) and must not commit it; the guard
// commits them together with the answer.
using IdempotentHandler = std::function<HttpReply(const HttpRequest&, BarrierTransaction&)>;

// Makes an HTTP entry point idempotent with the client's Idempotency-Key header (IETF httpapi
// draft "The Idempotency-Key HTTP Header Field"; the key may be sent bare or as a quoted
// structured-field string: 1 to max_key_length visible ASCII characters).
//
// - The first request with a key runs the handler. An answer below 500 (success, or an error
//   of the request itself) is stored with the key, the request's fingerprint (SHA-256 of
//   method, path and body) and an expiry, in the handler's own transaction: both commit or
//   neither does.
// - A repeat with the same key and fingerprint gets the stored status, content type and body;
//   the handler does not run.
// - A repeat while the first still runs gets 409 with Retry-After, at once: it does not wait
//   for the first's transaction.
// - The same key with another method, path or body gets 422; a missing key where one is
//   required, or an invalid one, gets 400 naming Idempotency-Key.
// - A 5xx answer or a handler that throws rolls the transaction back and releases the key:
//   nothing is stored and the retry runs the handler. So does a crash before commit, after
//   the lease (see IdempotencyOptions::lease).
// - Trouble with the database answers 503; the handler's writes are rolled back.
//
// How: a short committed "claim" transaction first inserts the key as in progress, with an
// owner token and a lease; the handler then runs in a second transaction that checks the
// claim is still its own and, on success, turns it into the stored answer. Duplicates look at
// the committed row outside any transaction (IdempotencyStore::Peek), so an open handler
// transaction, which on SQLite holds the file's write lock, never makes them wait; two
// requests that both find no row meet in the claim transaction, where the later sees the
// earlier's claim. (On SQLite a request that reaches the claim transaction in that narrow race
// while the winner's handler already holds the write lock waits for it, up to the store's
// busy timeout, and then replays the stored answer.)
//
// Thread-safe; `store` and `clock` must outlive the guard, and the guard what Wrap returns.
class IdempotencyGuard {
 public:
  IdempotencyGuard(IdempotencyStore& store, const Clock& clock, IdempotencyOptions options = {});

  HttpReply Handle(const HttpRequest& request, const IdempotentHandler& handler);

  // A route handler for Participant::OnPost/OnGet that calls Handle.
  RouteHandler Wrap(IdempotentHandler handler);

 private:
  HttpReply RunUnguarded(const HttpRequest& request, const IdempotentHandler& handler);
  HttpReply RunClaimed(const HttpRequest& request, const IdempotentHandler& handler,
                       const IdempotencyRecord& claim);
  HttpReply Seen(const IdempotencyRecord& record, const std::string& fingerprint) const;
  bool Live(const IdempotencyRecord& record, TimePoint now) const;
  void ReleaseClaim(const std::string& key, const std::string& owner);

  IdempotencyStore& store_;
  const Clock& clock_;
  const IdempotencyOptions options_;
};

}  // namespace settle::sdk
