// UpdateIfVersion and MoveState on SQLite: the shared cases of version_check_cases.h, and the
// HTTP answers of their outcomes.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "settle/sdk/cas_outcome.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "sqlite_exec.h"
#include "temp_dir.h"
#include "version_check_cases.h"

namespace settle::sdk::test {
namespace {

// The VersionDb of version_check_cases.h in a fresh SQLite file.
class SqliteVersionDb final : public VersionDb {
 public:
  SqliteVersionDb() {
    Result<std::unique_ptr<SqliteBarrierStore>> store =
        SqliteBarrierStore::Open(dir_.File("shop.db"));
    INFO(store.status().ToString());
    REQUIRE(store);
    store_ = std::move(store).value();
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(ExecSql(SqliteBarrierStore::Connection(**tx), kAccountsSql).ok());
    REQUIRE(ExecSql(SqliteBarrierStore::Connection(**tx), kAnnSql).ok());
    REQUIRE((*tx)->Commit().ok());
  }

  BarrierStore& store() override { return *store_; }

  std::string Text(const std::string& sql) override {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    std::string value;
    REQUIRE(sqlite3_exec(
                SqliteBarrierStore::Connection(**tx), sql.c_str(),
                [](void* out, int, char** values, char**) {
                  *static_cast<std::string*>(out) = values[0] != nullptr ? values[0] : "";
                  return 0;
                },
                &value, nullptr) == SQLITE_OK);
    (*tx)->Rollback();
    return value;
  }

 private:
  settle::testing::TempDir dir_;
  std::unique_ptr<SqliteBarrierStore> store_;
};

TEST_CASE("version check: a matching version is applied and bumped", "[version_check]") {
  SqliteVersionDb db;
  AMatchingVersionIsAppliedAndBumped(db);
}

TEST_CASE("version check: the same update retried is already done", "[version_check]") {
  SqliteVersionDb db;
  TheSameUpdateRetriedIsAlreadyDone(db);
}

TEST_CASE("version check: another change in between is a conflict", "[version_check]") {
  SqliteVersionDb db;
  AnotherChangeInBetweenIsAConflict(db);
}

TEST_CASE("version check: an unknown id is not found", "[version_check]") {
  SqliteVersionDb db;
  AnUnknownIdIsNotFound(db);
}

TEST_CASE("version check: text values are bound, not spliced", "[version_check]") {
  SqliteVersionDb db;
  TextValuesAreBoundNotSpliced(db);
}

TEST_CASE("version check: a state only moves forward", "[version_check]") {
  SqliteVersionDb db;
  AStateOnlyMovesForward(db);
}

TEST_CASE("version check: a state outside the order is a conflict", "[version_check]") {
  SqliteVersionDb db;
  AStateOutsideTheOrderIsAConflict(db);
}

TEST_CASE("version check: invalid identifiers and states are refused by name", "[version_check]") {
  SqliteVersionDb db;
  InvalidArgumentsAreRefusedByName(db);
}

TEST_CASE("version check: racing updates apply exactly once", "[version_check]") {
  SqliteVersionDb db;
  RacingUpdatesApplyExactlyOnce(db);
}

TEST_CASE("version check: a transaction of another store is refused", "[version_check]") {
  struct Foreign final : BarrierTransaction {
    Result<bool> InsertIfAbsent(const BarrierRow&) override { return false; }
    Result<std::optional<std::string>> ReasonOf(const std::string&, const std::string&,
                                                const std::string&, const std::string&) override {
      return std::optional<std::string>();
    }
    Status Commit() override { return Status::Ok(); }
    void Rollback() override {}
  } foreign;
  Result<CasOutcome> outcome = UpdateIfVersion(foreign, SetBalance(1, 1, 70));
  REQUIRE_FALSE(outcome);
  CHECK(outcome.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(outcome.status().message(), Catch::Contains("tx"));
}

TEST_CASE("version check: outcomes answer 200, 200, 409 and 404", "[version_check]") {
  CHECK(HttpStatusOf(CasOutcome::kApplied) == 200);
  CHECK(HttpStatusOf(CasOutcome::kAlreadyDone) == 200);
  CHECK(HttpStatusOf(CasOutcome::kConflict) == 409);
  CHECK(HttpStatusOf(CasOutcome::kNotFound) == 404);
  CHECK(ToString(CasOutcome::kAlreadyDone) == "already done");
  CHECK(ToString(CasOutcome::kConflict) == "conflict");
}

}  // namespace
}  // namespace settle::sdk::test
