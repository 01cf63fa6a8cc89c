#include "settle/sdk/idempotency_guard.h"

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

#include "random_hex.h"
#include "settle/net/message.h"
#include "settle/sdk/caught.h"
#include "settle/sdk/request_fingerprint.h"

namespace settle::sdk {
namespace {

constexpr const char* kHeader = "Idempotency-Key";

HttpReply Answer(int status, const std::string& message) {
  return {status, net::MessageBody(message)};
}

// The database (or the random generator) failed: the client may retry.
HttpReply StoreTrouble(const Status& status) {
  return Answer(503, "idempotency: " + status.ToString());
}

// The key without the quotes of a structured-field string, or nullopt if it is not valid.
std::optional<std::string> ParseKey(std::string value, std::size_t max_length) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  if (value.empty() || value.size() > max_length) return std::nullopt;
  for (char c : value) {
    if (c < 0x21 || c > 0x7e || c == '"' || c == '\\') return std::nullopt;
  }
  return value;
}

// Random names: a claim's owner, an issued token (16 bytes, 32 hex digits).
constexpr std::size_t kRandomBytes = 16;

std::chrono::seconds::rep Seconds(Duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

// Runs the handler; an exception is a 500, like a route handler that throws.
HttpReply RunCaught(const IdempotentHandler& handler, const HttpRequest& request,
                    BarrierTransaction& tx) {
  return Caught(
      "handler", [&] { return handler(request, tx); },
      [](Status threw) { return Answer(500, threw.message()); });
}

}  // namespace

IdempotencyGuard::IdempotencyGuard(IdempotencyStore& store, const Clock& clock,
                                   IdempotencyOptions options)
    : store_(store), clock_(clock), options_(options) {}

RouteHandler IdempotencyGuard::Wrap(IdempotentHandler handler) {
  return [this, handler = std::move(handler)](const HttpRequest& request) {
    return Handle(request, handler);
  };
}

bool IdempotencyGuard::Live(const IdempotencyRecord& record, TimePoint now) const {
  if (record.expires <= now) return false;
  return record.state == IdempotencyRecord::State::kDone || record.lease_until > now;
}

HttpReply IdempotencyGuard::Seen(const IdempotencyRecord& record,
                                 const std::string& fingerprint) const {
  if (record.fingerprint != fingerprint) {
    return Answer(422, std::string(kHeader) + " was used for another request");
  }
  if (record.state == IdempotencyRecord::State::kDone) {
    return {record.status, record.body, record.content_type};
  }
  HttpReply busy = Answer(409, "a request with this Idempotency-Key is in progress");
  busy.headers.emplace_back("Retry-After", std::to_string(options_.retry_after_seconds));
  return busy;
}

std::string IdempotencyGuard::CallerScope(const HttpRequest& request) const {
  if (options_.caller_of) return Sha256Hex(options_.caller_of(request));
  if (options_.mode != IdempotencyMode::kIssuedToken) return "";
  const std::string* authorization = request.Header("Authorization");
  return Sha256Hex(authorization == nullptr ? std::string_view() : *authorization);
}

Result<IssuedToken> IdempotencyGuard::IssueToken(const HttpRequest& request) {
  Result<std::string> token = RandomHex(kRandomBytes);
  if (!token) return token.status();
  IssuedToken issued{*token, CallerScope(request), clock_.Now() + options_.token_expiry};
  Result<std::unique_ptr<BarrierTransaction>> tx = store_.Begin();
  if (!tx) return tx.status();
  Status s = store_.PutToken(**tx, issued);
  if (s.ok()) s = (*tx)->Commit();
  if (!s.ok()) return s;
  return issued;
}

RouteHandler IdempotencyGuard::TokenRoute() {
  return [this](const HttpRequest& request) {
    Result<IssuedToken> issued = IssueToken(request);
    if (!issued) return StoreTrouble(issued.status());
    HttpReply reply{201, R"({"token":")" + issued->token + R"(","expires_in":)" +
                             std::to_string(Seconds(options_.token_expiry)) + "}"};
    reply.headers.emplace_back("Cache-Control", "no-store");
    return reply;
  };
}

std::optional<HttpReply> IdempotencyGuard::RefuseToken(BarrierTransaction& tx,
                                                       const std::string& token,
                                                       const std::string& scope, TimePoint now) {
  Result<std::optional<IssuedToken>> issued = store_.FindToken(tx, token);
  if (!issued) return StoreTrouble(issued.status());
  if (!*issued || (*issued)->expires <= now) {
    return Answer(400, std::string(kHeader) +
                           " is not a token this service issued, or it expired or was used: "
                           "ask for a new one");
  }
  if ((*issued)->caller != scope) {
    return Answer(403, std::string(kHeader) + " is a token issued to another caller");
  }
  return std::nullopt;
}

HttpReply IdempotencyGuard::Handle(const HttpRequest& request, const IdempotentHandler& handler) {
  const bool tokens = options_.mode == IdempotencyMode::kIssuedToken;
  const std::string* sent = request.Header(kHeader);
  if (sent == nullptr) {
    if (tokens) return Answer(400, std::string(kHeader) + " is required: ask for a token first");
    if (!options_.key_required) return RunUnguarded(request, handler);
    return Answer(400, std::string(kHeader) + " is required");
  }
  std::optional<std::string> key = ParseKey(*sent, options_.max_key_length);
  if (!key) {
    return Answer(400, std::string(kHeader) + " must be 1 to " +
                           std::to_string(options_.max_key_length) + " visible ASCII characters");
  }
  const std::string fingerprint = RequestFingerprint(request.method, request.path, request.body);
  const std::string scope = CallerScope(request);
  const std::string stored_key = scope.empty() ? *key : scope + "/" + *key;

  // A duplicate of a request that is running or done answers here, without the write lock.
  const TimePoint now = clock_.Now();
  Result<std::optional<IdempotencyRecord>> peeked = store_.Peek(stored_key);
  if (!peeked) return StoreTrouble(peeked.status());
  if (*peeked && Live(**peeked, now)) return Seen(**peeked, fingerprint);

  // The claim: committed on its own, so that duplicates see it while the handler runs.
  Result<std::string> owner = RandomHex(kRandomBytes);
  if (!owner) return StoreTrouble(owner.status());
  IdempotencyRecord claim;
  claim.key = stored_key;
  claim.fingerprint = fingerprint;
  claim.state = IdempotencyRecord::State::kInProgress;
  claim.owner = *owner;
  claim.lease_until = now + options_.lease;
  claim.create_time = now;
  claim.expires = now + options_.expiry;
  {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_.Begin();
    if (!tx) return StoreTrouble(tx.status());
    Result<std::optional<IdempotencyRecord>> found = store_.Find(**tx, stored_key);
    if (!found) return StoreTrouble(found.status());
    // Another request claimed the key between the peek and here.
    if (*found && Live(**found, now)) return Seen(**found, fingerprint);
    if (tokens) {
      if (std::optional<HttpReply> refused = RefuseToken(**tx, *key, scope, now)) return *refused;
    }
    Status s = store_.Put(**tx, claim);
    if (s.ok()) s = (*tx)->Commit();
    if (!s.ok()) return StoreTrouble(s);
  }
  return RunClaimed(request, handler, claim, tokens ? *key : std::string());
}

HttpReply IdempotencyGuard::RunClaimed(const HttpRequest& request, const IdempotentHandler& handler,
                                       const IdempotencyRecord& claim, const std::string& token) {
  Result<std::unique_ptr<BarrierTransaction>> tx = store_.Begin();
  if (!tx) {
    ReleaseClaim(claim.key, claim.owner);
    return StoreTrouble(tx.status());
  }
  // The claim is still ours unless its lease ran out and a repeat took the key over.
  Result<std::optional<IdempotencyRecord>> found = store_.Find(**tx, claim.key);
  if (!found) {
    (*tx)->Rollback();
    ReleaseClaim(claim.key, claim.owner);
    return StoreTrouble(found.status());
  }
  if (!*found || (*found)->owner != claim.owner ||
      (*found)->state != IdempotencyRecord::State::kInProgress) {
    (*tx)->Rollback();
    HttpReply lost = Answer(409, "the claim of this Idempotency-Key ran out before its handler");
    lost.headers.emplace_back("Retry-After", std::to_string(options_.retry_after_seconds));
    return lost;
  }

  HttpReply reply = RunCaught(handler, request, **tx);
  if (reply.status >= 500) {
    (*tx)->Rollback();
    ReleaseClaim(claim.key, claim.owner);
    return reply;
  }
  IdempotencyRecord done = claim;
  done.state = IdempotencyRecord::State::kDone;
  done.status = reply.status;
  done.content_type = reply.content_type;
  done.body = reply.body;
  Status s = store_.Put(**tx, done);
  if (s.ok() && !token.empty()) {
    // Used up with the handler's writes. (Gone already only if it expired while the handler
    // ran and the cleaner deleted it: the claim made it this request's all the same.)
    Result<bool> consumed = store_.DeleteToken(**tx, token);
    if (!consumed) s = consumed.status();
  }
  if (s.ok()) s = (*tx)->Commit();
  if (!s.ok()) {
    (*tx)->Rollback();
    ReleaseClaim(claim.key, claim.owner);
    return StoreTrouble(s);
  }
  return reply;
}

HttpReply IdempotencyGuard::RunUnguarded(const HttpRequest& request,
                                         const IdempotentHandler& handler) {
  Result<std::unique_ptr<BarrierTransaction>> tx = store_.Begin();
  if (!tx) return StoreTrouble(tx.status());
  HttpReply reply = RunCaught(handler, request, **tx);
  if (reply.status >= 500) {
    (*tx)->Rollback();
    return reply;
  }
  Status s = (*tx)->Commit();
  if (!s.ok()) return StoreTrouble(s);
  return reply;
}

void IdempotencyGuard::ReleaseClaim(const std::string& key, const std::string& owner) {
  // Best effort: a claim left behind only makes repeats wait for its lease.
  Result<std::unique_ptr<BarrierTransaction>> tx = store_.Begin();
  if (!tx) return;
  Result<bool> deleted = store_.DeleteClaim(**tx, key, owner);
  if (deleted) (*tx)->Commit().IgnoreError();
}

}  // namespace settle::sdk
