// UpdateIfVersion and MoveState on PostgreSQL: the shared cases of version_check_cases.h, each
// in a schema of its own on the test server.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "postgres_test_database.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/postgres_barrier_store.h"
#include "version_check_cases.h"

namespace settle::sdk::test {
namespace {

// The VersionDb of version_check_cases.h in a fresh schema.
class PostgresVersionDb final : public VersionDb {
 public:
  PostgresVersionDb() {
    Result<std::unique_ptr<PostgresBarrierStore>> store =
        PostgresBarrierStore::Open(database_.conninfo());
    INFO(store.status().ToString());
    REQUIRE(store);
    store_ = std::move(store).value();
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(PostgresBarrierStore::Connection(**tx)->Run(kAccountsSql).ok());
    REQUIRE(PostgresBarrierStore::Connection(**tx)->Run(kAnnSql).ok());
    REQUIRE((*tx)->Commit().ok());
  }

  BarrierStore& store() override { return *store_; }

  std::string Text(const std::string& sql) override {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    Result<db::PgResult> rows = PostgresBarrierStore::Connection(**tx)->Query(sql);
    INFO(rows.status().ToString());
    REQUIRE(rows);
    REQUIRE(rows->rows() == 1);
    std::string value = rows->Text(0, 0);
    (*tx)->Rollback();
    return value;
  }

 private:
  settle::testing::PostgresTestDatabase database_;
  std::unique_ptr<PostgresBarrierStore> store_;
};

TEST_CASE("version check (postgres): a matching version is applied and bumped", "[version_check]") {
  PostgresVersionDb db;
  AMatchingVersionIsAppliedAndBumped(db);
}

TEST_CASE("version check (postgres): the same update retried is already done", "[version_check]") {
  PostgresVersionDb db;
  TheSameUpdateRetriedIsAlreadyDone(db);
}

TEST_CASE("version check (postgres): another change in between is a conflict", "[version_check]") {
  PostgresVersionDb db;
  AnotherChangeInBetweenIsAConflict(db);
}

TEST_CASE("version check (postgres): an unknown id is not found", "[version_check]") {
  PostgresVersionDb db;
  AnUnknownIdIsNotFound(db);
}

TEST_CASE("version check (postgres): text values are bound, not spliced", "[version_check]") {
  PostgresVersionDb db;
  TextValuesAreBoundNotSpliced(db);
}

TEST_CASE("version check (postgres): a state only moves forward", "[version_check]") {
  PostgresVersionDb db;
  AStateOnlyMovesForward(db);
}

TEST_CASE("version check (postgres): a state outside the order is a conflict", "[version_check]") {
  PostgresVersionDb db;
  AStateOutsideTheOrderIsAConflict(db);
}

TEST_CASE("version check (postgres): invalid identifiers and states are refused by name",
          "[version_check]") {
  PostgresVersionDb db;
  InvalidArgumentsAreRefusedByName(db);
}

TEST_CASE("version check (postgres): racing updates apply exactly once", "[version_check]") {
  PostgresVersionDb db;
  RacingUpdatesApplyExactlyOnce(db);
}

}  // namespace
}  // namespace settle::sdk::test
