#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/idempotency_store.h"
#include "settle/sdk/participant.h"

namespace settle::sdk {

// Where the keys of a guarded entry point come from.
enum class IdempotencyMode {
  // The client makes a key of its own for each operation (a UUID) and sends it with every
  // attempt of that operation.
  kClientKey,
  // For clients that cannot make keys (an HTML form): the client first asks the service for a
  // token (IdempotencyGuard::IssueToken, TokenRoute) and sends it as its Idempotency-Key. The
  // token must have been issued, to the same caller, and not have expired; the request that
  // uses it consumes it in the handler's transaction, and repeats get the stored answer.
  kIssuedToken,
};

struct IdempotencyOptions {
  IdempotencyMode mode = IdempotencyMode::kClientKey;
  // kClientKey: without an Idempotency-Key a request is refused with 400 (true) or runs
  // unguarded (false). An issued token is always required.
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
  // kIssuedToken: how long an issued token may wait for its request.
  Duration token_expiry{3600LL * 1000};
  // Who sends a request: the authenticated user or client, as the service knows it. Set, it
  // scopes keys: two callers' equal keys are different keys, a stored answer is replayed only
  // to its own caller, and a token is accepted only from the caller it was issued to. Unset,
  // keys are shared by all callers, and tokens are bound to the request's Authorization header
  // (requests without one are a single anonymous caller). Give a stable identity, not a
  // credential that a client may renew between two attempts of one operation.
  std::function<std::string(const HttpRequest&)> caller_of;
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
// - kIssuedToken: a key that is not a live token issued to this caller gets 400 (never issued,
//   expired, or used by another caller) or 403 (issued to another caller); the request that
//   runs deletes the token in its transaction, together with storing its answer.
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

  // A new token (IdempotencyMode::kIssuedToken) for the caller of `request`, stored durably
  // before it returns; valid for options.token_expiry.
  Result<IssuedToken> IssueToken(const HttpRequest& request);

  // A route handler that issues a token: 201 {"token": "<32 hex digits>", "expires_in":
  // <seconds>} with Cache-Control: no-store; 503 if the database fails. Register it on a POST
  // route (a token is a write), next to the guarded one.
  RouteHandler TokenRoute();

 private:
  HttpReply RunUnguarded(const HttpRequest& request, const IdempotentHandler& handler);
  HttpReply RunClaimed(const HttpRequest& request, const IdempotentHandler& handler,
                       const IdempotencyRecord& claim, const std::string& token);
  std::string CallerScope(const HttpRequest& request) const;
  std::optional<HttpReply> RefuseToken(BarrierTransaction& tx, const std::string& token,
                                       const std::string& scope, TimePoint now);
  HttpReply Seen(const IdempotencyRecord& record, const std::string& fingerprint) const;
  bool Live(const IdempotencyRecord& record, TimePoint now) const;
  void ReleaseClaim(const std::string& key, const std::string& owner);

  IdempotencyStore& store_;
  const Clock& clock_;
  const IdempotencyOptions options_;
};

}  // namespace settle::sdk
