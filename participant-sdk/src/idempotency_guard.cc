#include "settle/sdk/idempotency_guard.h"

#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include <openssl/rand.h>

#include <array>
#include <random>

#include "settle/net/message.h"
#include "settle/sdk/request_fingerprint.h"

namespace settle::sdk {
namespace {

constexpr const char* kHeader = "Idempotency-Key";

HttpReply Answer(int status, const std::string& message) {
  return {status, net::MessageBody(message)};
}

HttpReply StoreTrouble(const Status& status) {
  return Answer(503, "idempotency: the database failed: " + status.ToString());
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

// A fresh random token (32 hex digits) naming the one call that holds a claim.
std::string NewClaimOwner() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    thread_local std::mt19937_64 fallback{std::random_device{}()};
    for (auto& b : bytes) b = static_cast<unsigned char>(fallback());
  }
  return HexDigits(bytes.data(), bytes.size());
}

// Runs the handler; an exception is a 500, like a route handler that throws.
HttpReply RunCaught(const IdempotentHandler& handler, const HttpRequest& request,
                    BarrierTransaction& tx) {
  try {
    return handler(request, tx);
  } catch (const std::exception& e) {
    return Answer(500, std::string("handler threw: ") + e.what());
  } catch (...) {
    return Answer(500, "handler threw");
  }
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

HttpReply IdempotencyGuard::Handle(const HttpRequest& request, const IdempotentHandler& handler) {
  const std::string* sent = request.Header(kHeader);
  if (sent == nullptr) {
    if (!options_.key_required) return RunUnguarded(request, handler);
    return Answer(400, std::string(kHeader) + " is required");
  }
  std::optional<std::string> key = ParseKey(*sent, options_.max_key_length);
  if (!key) {
    return Answer(400, std::string(kHeader) + " must be 1 to " +
                           std::to_string(options_.max_key_length) + " visible ASCII characters");
  }
  const std::string fingerprint = RequestFingerprint(request.method, request.path, request.body);

  // A duplicate of a request that is running or done answers here, without the write lock.
  const TimePoint now = clock_.Now();
  Result<std::optional<IdempotencyRecord>> peeked = store_.Peek(*key);
  if (!peeked) return StoreTrouble(peeked.status());
  if (*peeked && Live(**peeked, now)) return Seen(**peeked, fingerprint);

  // The claim: committed on its own, so that duplicates see it while the handler runs.
  IdempotencyRecord claim;
  claim.key = *key;
  claim.fingerprint = fingerprint;
  claim.state = IdempotencyRecord::State::kInProgress;
  claim.owner = NewClaimOwner();
  claim.lease_until = now + options_.lease;
  claim.create_time = now;
  claim.expires = now + options_.expiry;
  {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_.Begin();
    if (!tx) return StoreTrouble(tx.status());
    Result<std::optional<IdempotencyRecord>> found = store_.Find(**tx, *key);
    if (!found) return StoreTrouble(found.status());
    // Another request claimed the key between the peek and here.
    if (*found && Live(**found, now)) return Seen(**found, fingerprint);
    Status s = store_.Put(**tx, claim);
    if (s.ok()) s = (*tx)->Commit();
    if (!s.ok()) return StoreTrouble(s);
  }
  return RunClaimed(request, handler, claim);
}

HttpReply IdempotencyGuard::RunClaimed(const HttpRequest& request, const IdempotentHandler& handler,
                                       const IdempotencyRecord& claim) {
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
