// IdempotencyGuard on PostgreSQL: the shared cases of idempotency_cases.h, each in a schema of
// its own on the test server.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "idempotency_cases.h"
#include "postgres_test_database.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/postgres_barrier_store.h"
#include "settle/sdk/postgres_idempotency_store.h"

namespace settle::sdk::test {
namespace {

// The IdempotencyDb of idempotency_cases.h in a fresh schema.
class PostgresIdempotencyDb final : public IdempotencyDb {
 public:
  PostgresIdempotencyDb() {
    Result<std::unique_ptr<PostgresBarrierStore>> barrier =
        PostgresBarrierStore::Open(database_.conninfo());
    INFO(barrier.status().ToString());
    REQUIRE(barrier);
    barrier_ = std::move(barrier).value();
    Result<std::unique_ptr<PostgresIdempotencyStore>> store =
        PostgresIdempotencyStore::Open(*barrier_);
    INFO(store.status().ToString());
    REQUIRE(store);
    store_ = std::move(store).value();
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier_->Begin();
    REQUIRE(tx);
    REQUIRE(PostgresBarrierStore::Connection(**tx)
                ->Run("CREATE TABLE orders (name TEXT NOT NULL)")
                .ok());
    REQUIRE((*tx)->Commit().ok());
  }

  IdempotencyStore& store() override { return *store_; }

  Status Write(BarrierTransaction& tx, const std::string& name) override {
    Result<db::PgResult> inserted = PostgresBarrierStore::Connection(tx)->Query(
        "INSERT INTO orders VALUES ($1)", db::PgParams().Text(name));
    return inserted ? Status::Ok() : inserted.status();
  }

  int Orders(const std::string& name) override {
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier_->Begin();
    REQUIRE(tx);
    Result<db::PgResult> rows = PostgresBarrierStore::Connection(**tx)->Query(
        "SELECT count(*) FROM orders WHERE name = $1", db::PgParams().Text(name));
    REQUIRE(rows);
    return static_cast<int>(rows->Int(0, 0));
  }

 private:
  settle::testing::PostgresTestDatabase database_;
  std::unique_ptr<PostgresBarrierStore> barrier_;
  std::unique_ptr<PostgresIdempotencyStore> store_;
};

TEST_CASE("idempotency (postgres): the first request runs and a repeat gets its stored answer",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  FirstRequestRunsAndARepeatGetsTheStoredAnswer(db);
}

TEST_CASE("idempotency (postgres): the same key with another request is 422", "[idempotency]") {
  PostgresIdempotencyDb db;
  AnotherRequestWithTheKeyIs422(db);
}

TEST_CASE("idempotency (postgres): a missing or invalid key is 400 naming Idempotency-Key",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  AMissingOrInvalidKeyIs400(db);
}

TEST_CASE("idempotency (postgres): where the key is optional, a request without one just runs",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  AnOptionalKeyMayBeLeftOut(db);
}

TEST_CASE("idempotency (postgres): a 4xx answer is stored and replayed", "[idempotency]") {
  PostgresIdempotencyDb db;
  ARequestErrorIsStoredAndReplayed(db);
}

TEST_CASE("idempotency (postgres): a 5xx answer stores nothing and the retry runs again",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  AServerErrorStoresNothingAndTheRetryRuns(db);
}

TEST_CASE("idempotency (postgres): a handler that throws before commit leaves no trace",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  AHandlerThatThrowsBeforeCommitLeavesNoTrace(db);
}

TEST_CASE("idempotency (postgres): a crashed process's claim holds the key for its lease only",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  ACrashedClaimHoldsTheKeyForItsLeaseOnly(db);
}

TEST_CASE("idempotency (postgres): concurrent duplicates run the handler once and get 409",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  ConcurrentDuplicatesRunTheHandlerOnce(db);
}

TEST_CASE("idempotency (postgres): keys expire and the cleaner deletes them in batches",
          "[idempotency]") {
  PostgresIdempotencyDb db;
  KeysExpireAndAreCleanedUp(db);
}

TEST_CASE("idempotency (postgres): an issued token runs its request once and is used up",
          "[idempotency][token]") {
  PostgresIdempotencyDb db;
  AnIssuedTokenRunsItsRequestOnceAndIsUsedUp(db);
}

TEST_CASE(
    "idempotency (postgres): a token must be live and issued to this caller, 400 or 403 otherwise",
    "[idempotency][token]") {
  PostgresIdempotencyDb db;
  ATokenMustBeIssuedToThisCallerAndLive(db);
}

TEST_CASE("idempotency (postgres): a failed request leaves its token for the retry",
          "[idempotency][token]") {
  PostgresIdempotencyDb db;
  AFailedRequestLeavesItsTokenForTheRetry(db);
}

TEST_CASE("idempotency (postgres): concurrent submissions of one token run once",
          "[idempotency][token]") {
  PostgresIdempotencyDb db;
  ConcurrentSubmissionsOfOneTokenRunOnce(db);
}

TEST_CASE("idempotency (postgres): unused tokens expire and the cleaner deletes them",
          "[idempotency][token]") {
  PostgresIdempotencyDb db;
  UnusedTokensExpireAndAreCleanedUp(db);
}

TEST_CASE("idempotency (postgres): keys are scoped by the caller when the service names it",
          "[idempotency][token]") {
  PostgresIdempotencyDb db;
  KeysAreScopedByTheCallerWhenTheServiceNamesIt(db);
}

}  // namespace
}  // namespace settle::sdk::test
