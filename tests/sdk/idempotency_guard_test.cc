// IdempotencyGuard on SQLite: the shared cases of idempotency_cases.h, and one guarded entry
// point served over real HTTP by a Participant.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "idempotency_cases.h"
#include "json_client.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/sqlite_idempotency_store.h"
#include "sqlite_exec.h"
#include "temp_dir.h"

namespace settle::sdk::test {
namespace {

// The IdempotencyDb of idempotency_cases.h in a fresh SQLite file.
class SqliteIdempotencyDb final : public IdempotencyDb {
 public:
  SqliteIdempotencyDb() {
    const std::string path = dir_.File("shop.db");
    Result<std::unique_ptr<SqliteBarrierStore>> barrier = SqliteBarrierStore::Open(path);
    INFO(barrier.status().ToString());
    REQUIRE(barrier);
    barrier_ = std::move(barrier).value();
    Result<std::unique_ptr<SqliteIdempotencyStore>> store =
        SqliteIdempotencyStore::Open(path, *barrier_);
    INFO(store.status().ToString());
    REQUIRE(store);
    store_ = std::move(store).value();
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier_->Begin();
    REQUIRE(tx);
    REQUIRE(
        ExecSql(SqliteBarrierStore::Connection(**tx), "CREATE TABLE orders (name TEXT NOT NULL)")
            .ok());
    REQUIRE((*tx)->Commit().ok());
  }

  IdempotencyStore& store() override { return *store_; }

  Status Write(BarrierTransaction& tx, const std::string& name) override {
    return ExecSql(SqliteBarrierStore::Connection(tx),
                   "INSERT INTO orders VALUES ('" + name + "')");
  }

  int Orders(const std::string& name) override {
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier_->Begin();
    REQUIRE(tx);
    int rows = -1;
    const std::string sql = "SELECT count(*) FROM orders WHERE name = '" + name + "'";
    REQUIRE(sqlite3_exec(
                SqliteBarrierStore::Connection(**tx), sql.c_str(),
                [](void* out, int, char** v, char**) {
                  *static_cast<int*>(out) = std::stoi(v[0]);
                  return 0;
                },
                &rows, nullptr) == SQLITE_OK);
    return rows;
  }

 private:
  settle::testing::TempDir dir_;
  std::unique_ptr<SqliteBarrierStore> barrier_;
  std::unique_ptr<SqliteIdempotencyStore> store_;
};

TEST_CASE("idempotency (sqlite): the first request runs and a repeat gets its stored answer",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  FirstRequestRunsAndARepeatGetsTheStoredAnswer(db);
}

TEST_CASE("idempotency (sqlite): the same key with another request is 422", "[idempotency]") {
  SqliteIdempotencyDb db;
  AnotherRequestWithTheKeyIs422(db);
}

TEST_CASE("idempotency (sqlite): a missing or invalid key is 400 naming Idempotency-Key",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  AMissingOrInvalidKeyIs400(db);
}

TEST_CASE("idempotency (sqlite): where the key is optional, a request without one just runs",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  AnOptionalKeyMayBeLeftOut(db);
}

TEST_CASE("idempotency (sqlite): a 4xx answer is stored and replayed", "[idempotency]") {
  SqliteIdempotencyDb db;
  ARequestErrorIsStoredAndReplayed(db);
}

TEST_CASE("idempotency (sqlite): a 5xx answer stores nothing and the retry runs again",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  AServerErrorStoresNothingAndTheRetryRuns(db);
}

TEST_CASE("idempotency (sqlite): a handler that throws before commit leaves no trace",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  AHandlerThatThrowsBeforeCommitLeavesNoTrace(db);
}

TEST_CASE("idempotency (sqlite): a crashed process's claim holds the key for its lease only",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  ACrashedClaimHoldsTheKeyForItsLeaseOnly(db);
}

TEST_CASE("idempotency (sqlite): concurrent duplicates run the handler once and get 409",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  ConcurrentDuplicatesRunTheHandlerOnce(db);
}

TEST_CASE("idempotency (sqlite): keys expire and the cleaner deletes them in batches",
          "[idempotency]") {
  SqliteIdempotencyDb db;
  KeysExpireAndAreCleanedUp(db);
}

TEST_CASE("idempotency (sqlite): an issued token runs its request once and is used up",
          "[idempotency][token]") {
  SqliteIdempotencyDb db;
  AnIssuedTokenRunsItsRequestOnceAndIsUsedUp(db);
}

TEST_CASE(
    "idempotency (sqlite): a token must be live and issued to this caller, 400 or 403 otherwise",
    "[idempotency][token]") {
  SqliteIdempotencyDb db;
  ATokenMustBeIssuedToThisCallerAndLive(db);
}

TEST_CASE("idempotency (sqlite): a failed request leaves its token for the retry",
          "[idempotency][token]") {
  SqliteIdempotencyDb db;
  AFailedRequestLeavesItsTokenForTheRetry(db);
}

TEST_CASE("idempotency (sqlite): concurrent submissions of one token run once",
          "[idempotency][token]") {
  SqliteIdempotencyDb db;
  ConcurrentSubmissionsOfOneTokenRunOnce(db);
}

TEST_CASE("idempotency (sqlite): unused tokens expire and the cleaner deletes them",
          "[idempotency][token]") {
  SqliteIdempotencyDb db;
  UnusedTokensExpireAndAreCleanedUp(db);
}

TEST_CASE("idempotency (sqlite): keys are scoped by the caller when the service names it",
          "[idempotency][token]") {
  SqliteIdempotencyDb db;
  KeysAreScopedByTheCallerWhenTheServiceNamesIt(db);
}

TEST_CASE("idempotency (sqlite): a guarded route over HTTP replays and refuses by status",
          "[idempotency][http]") {
  SqliteIdempotencyDb db;
  GuardFixture f(db);
  Participant participant;
  participant.OnPost("/orders", f.guard.Wrap([&](const HttpRequest& r, BarrierTransaction& tx) {
    ++f.runs;
    REQUIRE(db.Write(tx, r.body).ok());
    return HttpReply{201, R"({"order": ")" + r.body + R"("})"};
  }));
  Result<int> port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);

  settle::testing::JsonClient client(*port);
  CHECK(client.Post("/orders", "book").status == 400);
  client.SetHeader("Idempotency-Key", "order-42");
  const auto first = client.Post("/orders", "book");
  CHECK(first.status == 201);
  CHECK(first.json["order"] == "book");
  const auto again = client.Post("/orders", "book");
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  CHECK(client.Post("/orders", "lamp").status == 422);
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
  participant.Stop();
}

TEST_CASE("idempotency (sqlite): a form asks the token route for a token and submits it twice",
          "[idempotency][token][http]") {
  SqliteIdempotencyDb db;
  GuardFixture f(db, TokenOptions());
  Participant participant;
  participant.OnPost("/orders/token", f.guard.TokenRoute());
  participant.OnPost("/orders", f.guard.Wrap([&](const HttpRequest& r, BarrierTransaction& tx) {
    ++f.runs;
    REQUIRE(db.Write(tx, r.body).ok());
    return HttpReply{201, R"({"order": ")" + r.body + R"("})"};
  }));
  Result<int> port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);

  settle::testing::JsonClient alice(*port);
  alice.SetHeader("Authorization", "Bearer alice");
  const auto issued = alice.Post("/orders/token", "");
  REQUIRE(issued.status == 201);
  REQUIRE(issued.json["token"].is_string());
  CHECK(issued.json["expires_in"] == 600);
  CHECK(issued.headers.count("Cache-Control") == 1);
  CHECK(issued.headers.find("Cache-Control")->second == "no-store");
  const std::string token = issued.json["token"];

  settle::testing::JsonClient mallory(*port);
  mallory.SetHeader("Authorization", "Bearer mallory");
  mallory.SetHeader("Idempotency-Key", token);
  CHECK(mallory.Post("/orders", "book").status == 403);

  alice.SetHeader("Idempotency-Key", token);
  const auto first = alice.Post("/orders", "book");
  CHECK(first.status == 201);
  const auto again = alice.Post("/orders", "book");
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  CHECK(f.runs == 1);
  CHECK(db.Orders("book") == 1);
  participant.Stop();
}

}  // namespace
}  // namespace settle::sdk::test
