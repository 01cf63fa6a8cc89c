// A transactional message's barrier (settle/sdk/msg_barrier.h) with the participant's data in
// PostgreSQL: the cases of msg_barrier_cases.h, in a schema of their own on the test server.
// Racing transactions are real concurrent transactions on separate connections.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "eventually.h"
#include "fake_clock.h"
#include "msg_barrier_cases.h"
#include "postgres_test_database.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/postgres_barrier_store.h"

namespace settle::sdk {
namespace {

using settle::testing::FakeClock;
using settle::testing::PostgresTestDatabase;
using namespace settle::sdk::test;

class PostgresLedger final : public MsgLedger {
 public:
  PostgresLedger() {
    Result<std::unique_ptr<PostgresBarrierStore>> opened =
        PostgresBarrierStore::Open(database_.conninfo());
    INFO(opened.status().ToString());
    REQUIRE(opened);
    store_ = std::move(opened).value();
    barrier_ = std::make_unique<Barrier>(*store_, clock_);
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(PostgresBarrierStore::Connection(**tx)
                ->Run("CREATE TABLE ledger (gid TEXT NOT NULL, amount BIGINT NOT NULL)")
                .ok());
    REQUIRE((*tx)->Commit().ok());
  }

  Barrier& barrier() override { return *barrier_; }

  Status Write(BarrierTransaction& tx, const std::string& gid, int amount) override {
    return PostgresBarrierStore::Connection(WrappedBarrierStore::Unwrap(tx))
        ->Run("INSERT INTO ledger VALUES ('" + gid + "', " + std::to_string(amount) + ")");
  }

  int Rows(const std::string& gid) override {
    return static_cast<int>(Count("SELECT count(*) FROM ledger WHERE gid = '" + gid + "'"));
  }

  // A transaction waiting for another's row shows in pg_stat_activity with a Lock wait; every
  // connection of this test database carries the schema's name as its application_name.
  std::uint64_t WaitMark() override { return 0; }
  bool WaitUntilWaiting(std::uint64_t) override {
    const std::string sql =
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
        "application_name = '" +
        database_.schema() + "'";
    return settle::testing::Eventually([&] { return Count(sql) != 0; }, std::chrono::seconds(10),
                                       std::chrono::milliseconds(2));
  }

 private:
  std::int64_t Count(const std::string& sql) {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    Result<db::PgResult> rows = PostgresBarrierStore::Connection(**tx)->Query(sql);
    INFO(rows.status().ToString());
    REQUIRE(rows);
    return rows->Int(0, 0);
  }

  PostgresTestDatabase database_;
  FakeClock clock_;
  std::unique_ptr<PostgresBarrierStore> store_;
  std::unique_ptr<Barrier> barrier_;
};

TEST_CASE("postgres msg barrier: a committed local transaction is answered SUCCESS, every time",
          "[barrier][msg][postgres]") {
  PostgresLedger db;
  CheckCommittedLocalTransactionAnswersSuccess(db);
}

TEST_CASE("postgres msg barrier: without a local transaction the answer is FAILURE and stays so",
          "[barrier][msg][postgres]") {
  PostgresLedger db;
  CheckNoLocalTransactionAnswersFailureForever(db);
}

TEST_CASE("postgres msg barrier: a local transaction that fails rolls back its writes and its row",
          "[barrier][msg][postgres]") {
  PostgresLedger db;
  CheckFailedLocalTransactionLeavesNothing(db);
}

TEST_CASE("postgres msg barrier: a second local transaction of one message does not run",
          "[barrier][msg][postgres]") {
  PostgresLedger db;
  CheckSecondLocalTransactionDoesNotRun(db);
}

TEST_CASE(
    "postgres msg barrier: a back-check during an open local transaction waits and answers "
    "SUCCESS once it commits",
    "[barrier][msg][postgres][race]") {
  PostgresLedger db;
  CheckBackCheckWaitsForAnOpenLocalTransaction(db, /*commits=*/true);
}

TEST_CASE(
    "postgres msg barrier: a back-check during an open local transaction waits and answers "
    "FAILURE once it rolls back",
    "[barrier][msg][postgres][race]") {
  PostgresLedger db;
  CheckBackCheckWaitsForAnOpenLocalTransaction(db, /*commits=*/false);
}

TEST_CASE("postgres msg barrier: a local transaction arriving during the back-check never commits",
          "[barrier][msg][postgres][race]") {
  PostgresLedger db;
  CheckLocalTransactionAfterTheBackCheckNeverCommits(db);
}

}  // namespace
}  // namespace settle::sdk
