#pragma once

// The contract of IdempotencyGuard (settle/sdk/idempotency_guard.h), written once and run
// against every idempotency store (idempotency_guard_test.cc: SQLite;
// postgres_idempotency_test.cc: PostgreSQL). Time is a FakeClock; races are ordered by events:
// the first handler is held on a Signal while the duplicates run, and is let go after the test
// has looked at their answers.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fake_clock.h"
#include "settle/sdk/idempotency_cleaner.h"
#include "settle/sdk/idempotency_guard.h"
#include "settle/sdk/request_fingerprint.h"
#include "wrapped_barrier_store.h"

namespace settle::sdk::test {

// A participant's database for the cases: an idempotency store and a business table
// `orders(name)` that the guarded handler writes to in the guard's transaction.
class IdempotencyDb {
 public:
  virtual ~IdempotencyDb() = default;
  virtual IdempotencyStore& store() = 0;
  virtual Status Write(BarrierTransaction& tx, const std::string& name) = 0;
  // Committed orders named `name`.
  virtual int Orders(const std::string& name) = 0;
};

inline HttpRequest Post(const std::string& key, const std::string& body,
                        const std::string& path = "/orders") {
  HttpRequest request{"POST", path, {}, body};
  if (!key.empty()) request.headers.emplace_back("Idempotency-Key", key);
  return request;
}

inline const std::string* HeaderOf(const HttpReply& reply, const std::string& name) {
  for (const auto& [n, v] : reply.headers) {
    if (n == name) return &v;
  }
  return nullptr;
}

// A guard on `db` and a handler that records an order named after the body and answers 201,
// or what `answer` says; counts its runs.
struct GuardFixture {
  explicit GuardFixture(IdempotencyDb& db, IdempotencyOptions options = {})
      : db(db), guard(db.store(), clock, options) {}

  HttpReply Call(const HttpRequest& request) {
    return guard.Handle(request, [this](const HttpRequest& r, BarrierTransaction& tx) {
      ++runs;
      if (hold) {
        held.Notify();
        release.Wait();
      }
      Status s = db.Write(tx, r.body);
      if (!s.ok()) throw std::runtime_error(s.ToString());
      if (throw_now) throw std::runtime_error("crash before commit");
      return HttpReply{answer, R"({"order": ")" + r.body + R"("})"};
    });
  }

  IdempotencyDb& db;
  settle::testing::FakeClock clock;
  IdempotencyGuard guard;
  std::atomic<int> runs{0};
  int answer = 201;
  bool throw_now = false;
  bool hold = false;
  Signal held;
  Signal release;
};

inline void FirstRequestRunsAndARepeatGetsTheStoredAnswer(IdempotencyDb& db) {
  GuardFixture f(db);
  const HttpReply first = f.Call(Post("k-1", "book"));
  CHECK(first.status == 201);
  CHECK(first.body == R"({"order": "book"})");
  CHECK(db.Orders("book") == 1);

  const HttpReply again = f.Call(Post("k-1", "book"));
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  CHECK(again.content_type == first.content_type);
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
}

inline void AnotherRequestWithTheKeyIs422(IdempotencyDb& db) {
  GuardFixture f(db);
  REQUIRE(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.Call(Post("k-1", "lamp")).status == 422);
  CHECK(f.Call(Post("k-1", "book", "/other")).status == 422);
  CHECK(f.runs == 1);
  CHECK(db.Orders("lamp") == 0);
}

inline void AMissingOrInvalidKeyIs400(IdempotencyDb& db) {
  IdempotencyOptions options;
  options.max_key_length = 8;
  GuardFixture f(db, options);
  for (const std::string& key :
       {std::string(), std::string("123456789"), std::string("has space"), std::string("\"\"")}) {
    INFO("key: " << key);
    const HttpReply reply = f.Call(Post(key, "book"));
    CHECK(reply.status == 400);
    CHECK(reply.body.find("Idempotency-Key") != std::string::npos);
  }
  CHECK(f.runs == 0);
  // A quoted structured-field string is the same key as the bare one.
  CHECK(f.Call(Post("\"k-1\"", "book")).status == 201);
  CHECK(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.runs == 1);
}

inline void AnOptionalKeyMayBeLeftOut(IdempotencyDb& db) {
  IdempotencyOptions options;
  options.key_required = false;
  GuardFixture f(db, options);
  CHECK(f.Call(Post("", "book")).status == 201);
  CHECK(f.Call(Post("", "book")).status == 201);
  CHECK(f.runs == 2);
  CHECK(db.Orders("book") == 2);
}

inline void ARequestErrorIsStoredAndReplayed(IdempotencyDb& db) {
  GuardFixture f(db);
  f.answer = 404;
  CHECK(f.Call(Post("k-1", "book")).status == 404);
  f.answer = 201;
  CHECK(f.Call(Post("k-1", "book")).status == 404);
  CHECK(f.runs == 1);
}

inline void AServerErrorStoresNothingAndTheRetryRuns(IdempotencyDb& db) {
  GuardFixture f(db);
  f.answer = 503;
  CHECK(f.Call(Post("k-1", "book")).status == 503);
  CHECK(db.Orders("book") == 0);  // the handler's write rolled back with it
  f.answer = 201;
  CHECK(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.runs == 2);
  CHECK(db.Orders("book") == 1);
}

inline void AHandlerThatThrowsBeforeCommitLeavesNoTrace(IdempotencyDb& db) {
  GuardFixture f(db);
  f.throw_now = true;
  const HttpReply crashed = f.Call(Post("k-1", "book"));
  CHECK(crashed.status == 500);
  CHECK(db.Orders("book") == 0);
  f.throw_now = false;
  CHECK(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.runs == 2);
  CHECK(db.Orders("book") == 1);
}

// What a process that died between its claim and its handler's commit leaves behind.
inline void ACrashedClaimHoldsTheKeyForItsLeaseOnly(IdempotencyDb& db) {
  IdempotencyOptions options;
  options.lease = Duration(30'000);
  options.retry_after_seconds = 7;
  GuardFixture f(db, options);
  IdempotencyRecord orphan;
  orphan.key = "k-1";
  orphan.fingerprint = RequestFingerprint("POST", "/orders", "book");
  orphan.owner = "dead process";
  orphan.create_time = f.clock.Now();
  orphan.lease_until = f.clock.Now() + options.lease;
  orphan.expires = f.clock.Now() + options.expiry;
  {
    Result<std::unique_ptr<BarrierTransaction>> tx = db.store().Begin();
    REQUIRE(tx);
    REQUIRE(db.store().Put(**tx, orphan).ok());
    REQUIRE((*tx)->Commit().ok());
  }
  const HttpReply busy = f.Call(Post("k-1", "book"));
  CHECK(busy.status == 409);
  REQUIRE(HeaderOf(busy, "Retry-After") != nullptr);
  CHECK(*HeaderOf(busy, "Retry-After") == "7");
  CHECK(f.runs == 0);

  f.clock.Advance(options.lease);
  CHECK(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
}

inline void ConcurrentDuplicatesRunTheHandlerOnce(IdempotencyDb& db) {
  GuardFixture f(db);
  f.hold = true;
  std::thread first([&] { CHECK(f.Call(Post("k-1", "book")).status == 201); });
  REQUIRE(f.held.Wait());

  // The first handler's transaction is open (on SQLite it holds the write lock): every
  // duplicate answers 409 at once, without waiting for it.
  constexpr int kDuplicates = 8;
  std::vector<HttpReply> replies(kDuplicates);
  std::vector<std::thread> duplicates;
  for (int i = 0; i < kDuplicates; ++i) {
    duplicates.emplace_back([&, i] { replies[i] = f.Call(Post("k-1", "book")); });
  }
  for (std::thread& t : duplicates) t.join();
  for (const HttpReply& reply : replies) {
    CHECK(reply.status == 409);
    CHECK(HeaderOf(reply, "Retry-After") != nullptr);
  }
  CHECK(f.runs == 1);

  f.release.Notify();
  first.join();
  const HttpReply after = f.Call(Post("k-1", "book"));
  CHECK(after.status == 201);
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
}

inline void KeysExpireAndAreCleanedUp(IdempotencyDb& db) {
  IdempotencyOptions options;
  options.expiry = Duration(60'000);
  GuardFixture f(db, options);
  IdempotencyCleanerOptions cleaner_options;
  cleaner_options.batch_size = 2;
  IdempotencyCleaner cleaner(db.store(), f.clock, cleaner_options);
  for (const char* key : {"k-1", "k-2", "k-3"}) REQUIRE(f.Call(Post(key, "book")).status == 201);

  f.clock.Advance(Duration(59'999));
  REQUIRE(cleaner.CleanOnce());
  CHECK(cleaner.deleted() == 0);
  CHECK(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.runs == 3);  // still remembered

  f.clock.Advance(Duration(2));
  // Expired: a repeat runs again, even before the cleaner has deleted the key.
  CHECK(f.Call(Post("k-1", "book")).status == 201);
  CHECK(f.runs == 4);
  Result<std::size_t> deleted = cleaner.CleanOnce();
  REQUIRE(deleted);
  CHECK(*deleted == 2);  // k-2 and k-3, over two batches; k-1 was renewed
  Result<std::optional<IdempotencyRecord>> renewed = db.store().Peek("k-1");
  REQUIRE(renewed);
  CHECK(renewed->has_value());
}

// --- Issued tokens (IdempotencyMode::kIssuedToken) and callers ---

// `request` as sent with `Authorization: <authorization>`.
inline HttpRequest From(const std::string& authorization, HttpRequest request) {
  request.headers.emplace_back("Authorization", authorization);
  return request;
}

inline IdempotencyOptions TokenOptions() {
  IdempotencyOptions options;
  options.mode = IdempotencyMode::kIssuedToken;
  options.token_expiry = Duration(600'000);
  return options;
}

inline std::string IssueTokenTo(GuardFixture& f, const std::string& authorization) {
  Result<IssuedToken> token = f.guard.IssueToken(From(authorization, HttpRequest{"POST", "/t"}));
  INFO(token.status().ToString());
  REQUIRE(token);
  CHECK(token->token.size() == 32);
  return token->token;
}

inline bool TokenIsUnused(IdempotencyDb& db, const std::string& token) {
  Result<std::unique_ptr<BarrierTransaction>> tx = db.store().Begin();
  REQUIRE(tx);
  Result<std::optional<IssuedToken>> found = db.store().FindToken(**tx, token);
  REQUIRE(found);
  return found->has_value();
}

inline void AnIssuedTokenRunsItsRequestOnceAndIsUsedUp(IdempotencyDb& db) {
  GuardFixture f(db, TokenOptions());
  const std::string token = IssueTokenTo(f, "Bearer alice");
  CHECK(TokenIsUnused(db, token));

  const HttpReply first = f.Call(From("Bearer alice", Post(token, "book")));
  CHECK(first.status == 201);
  CHECK_FALSE(TokenIsUnused(db, token));  // consumed in the handler's transaction
  // The form submitted twice: the second gets the first's answer, and nothing runs.
  const HttpReply again = f.Call(From("Bearer alice", Post(token, "book")));
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
  // Another request under the used token is the same key with another request.
  CHECK(f.Call(From("Bearer alice", Post(token, "lamp"))).status == 422);
}

inline void ATokenMustBeIssuedToThisCallerAndLive(IdempotencyDb& db) {
  GuardFixture f(db, TokenOptions());
  const HttpReply missing = f.Call(From("Bearer alice", Post("", "book")));
  CHECK(missing.status == 400);
  CHECK(missing.body.find("Idempotency-Key") != std::string::npos);
  const HttpReply unknown = f.Call(From("Bearer alice", Post("0123456789abcdef", "book")));
  CHECK(unknown.status == 400);
  CHECK(unknown.body.find("Idempotency-Key") != std::string::npos);

  const std::string token = IssueTokenTo(f, "Bearer alice");
  const HttpReply foreign = f.Call(From("Bearer bob", Post(token, "book")));
  CHECK(foreign.status == 403);
  CHECK(f.Call(Post(token, "book")).status == 403);  // nor an anonymous caller
  CHECK(f.runs == 0);
  CHECK(TokenIsUnused(db, token));  // refusing bob did not spend alice's token

  const std::string stale = IssueTokenTo(f, "Bearer alice");
  f.clock.Advance(Duration(600'000));
  CHECK(f.Call(From("Bearer alice", Post(stale, "book"))).status == 400);
  CHECK(f.runs == 0);
  // A used token replays to its own caller only: bob sees no answer of alice's.
  const std::string fresh = IssueTokenTo(f, "Bearer alice");
  REQUIRE(f.Call(From("Bearer alice", Post(fresh, "book"))).status == 201);
  CHECK(f.Call(From("Bearer bob", Post(fresh, "book"))).status == 400);
  CHECK(f.runs == 1);
}

inline void AFailedRequestLeavesItsTokenForTheRetry(IdempotencyDb& db) {
  GuardFixture f(db, TokenOptions());
  const std::string token = IssueTokenTo(f, "Bearer alice");
  f.answer = 503;
  CHECK(f.Call(From("Bearer alice", Post(token, "book"))).status == 503);
  f.throw_now = true;
  f.answer = 201;
  CHECK(f.Call(From("Bearer alice", Post(token, "book"))).status == 500);
  CHECK(TokenIsUnused(db, token));
  CHECK(db.Orders("book") == 0);
  f.throw_now = false;
  CHECK(f.Call(From("Bearer alice", Post(token, "book"))).status == 201);
  CHECK(f.runs == 3);
  CHECK(db.Orders("book") == 1);
}

inline void ConcurrentSubmissionsOfOneTokenRunOnce(IdempotencyDb& db) {
  GuardFixture f(db, TokenOptions());
  const std::string token = IssueTokenTo(f, "Bearer alice");
  f.hold = true;
  std::thread first(
      [&] { CHECK(f.Call(From("Bearer alice", Post(token, "book"))).status == 201); });
  REQUIRE(f.held.Wait());
  constexpr int kDuplicates = 6;
  std::vector<HttpReply> replies(kDuplicates);
  std::vector<std::thread> duplicates;
  for (int i = 0; i < kDuplicates; ++i) {
    duplicates.emplace_back(
        [&, i] { replies[i] = f.Call(From("Bearer alice", Post(token, "book"))); });
  }
  for (std::thread& t : duplicates) t.join();
  for (const HttpReply& reply : replies) CHECK(reply.status == 409);
  f.release.Notify();
  first.join();
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
  CHECK_FALSE(TokenIsUnused(db, token));
}

inline void UnusedTokensExpireAndAreCleanedUp(IdempotencyDb& db) {
  GuardFixture f(db, TokenOptions());
  IdempotencyCleanerOptions cleaner_options;
  cleaner_options.batch_size = 2;
  IdempotencyCleaner cleaner(db.store(), f.clock, cleaner_options);
  const std::string used = IssueTokenTo(f, "Bearer alice");
  REQUIRE(f.Call(From("Bearer alice", Post(used, "book"))).status == 201);
  std::vector<std::string> unused;
  for (int i = 0; i < 3; ++i) unused.push_back(IssueTokenTo(f, "Bearer alice"));

  Result<std::size_t> early = cleaner.CleanOnce();
  REQUIRE(early);
  CHECK(*early == 0);
  f.clock.Advance(Duration(600'001));
  Result<std::size_t> deleted = cleaner.CleanOnce();
  REQUIRE(deleted);
  CHECK(*deleted == 3);  // the unused tokens; the used one's answer lives for options.expiry
  for (const std::string& token : unused) CHECK_FALSE(TokenIsUnused(db, token));
  CHECK(f.Call(From("Bearer alice", Post(used, "book"))).status == 201);
  CHECK(f.runs == 1);
}

inline void KeysAreScopedByTheCallerWhenTheServiceNamesIt(IdempotencyDb& db) {
  IdempotencyOptions options;
  options.caller_of = [](const HttpRequest& r) {
    const std::string* user = r.Header("X-User");
    return user == nullptr ? std::string() : *user;
  };
  GuardFixture f(db, options);
  auto as = [](const std::string& user, HttpRequest request) {
    request.headers.emplace_back("X-User", user);
    return request;
  };
  CHECK(f.Call(as("alice", Post("k-1", "book"))).status == 201);
  // Bob's k-1 is another key: it runs, and he never sees alice's answer.
  CHECK(f.Call(as("bob", Post("k-1", "lamp"))).status == 201);
  CHECK(f.Call(as("alice", Post("k-1", "book"))).status == 201);
  CHECK(f.Call(as("bob", Post("k-1", "book"))).status == 422);
  CHECK(f.runs == 2);
  CHECK(db.Orders("book") == 1);
  CHECK(db.Orders("lamp") == 1);
}

}  // namespace settle::sdk::test
