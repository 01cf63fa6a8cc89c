// The participant barrier of docs/protocol.md §6.3 with the participant's data in PostgreSQL: a
// bank account whose Try reserves money, Confirm spends it and Cancel releases it, its rows and
// the barrier's in one local transaction. Each case runs in a schema of its own on the test
// server; racing calls are real concurrent transactions on separate connections.
#include "settle/sdk/postgres_barrier_store.h"

#include <catch2/catch.hpp>

#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fake_clock.h"
#include "postgres_test_database.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/barrier.h"

namespace settle::sdk {
namespace {

using settle::testing::FakeClock;
using settle::testing::PostgresTestDatabase;

constexpr std::int64_t kOpeningBalance = 100;

struct Account {
  std::int64_t balance = 0;
  std::int64_t frozen = 0;
  bool operator==(const Account&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Account& a) {
  return os << "{balance " << a.balance << ", frozen " << a.frozen << "}";
}

// Business code: SQL on the barrier transaction's own connection. `runs` counts executions.
class Bank {
 public:
  Bank() {
    Result<std::unique_ptr<PostgresBarrierStore>> opened =
        PostgresBarrierStore::Open(database_.conninfo());
    INFO(opened.status().ToString());
    REQUIRE(opened);
    store_ = std::move(opened).value();
    barrier_ = std::make_unique<Barrier>(*store_, clock_);
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(PostgresBarrierStore::Connection(**tx)
                ->Run("CREATE TABLE account (id INTEGER PRIMARY KEY, balance BIGINT NOT NULL, "
                      "frozen BIGINT NOT NULL); INSERT INTO account VALUES (1, " +
                      std::to_string(kOpeningBalance) + ", 0)")
                .ok());
    REQUIRE((*tx)->Commit().ok());
  }

  Barrier& barrier() { return *barrier_; }
  PostgresBarrierStore& store() { return *store_; }
  const PostgresTestDatabase& database() const { return database_; }
  FakeClock& clock() { return clock_; }
  std::atomic<int> runs{0};

  Barrier::Business Try() {
    return [this](BarrierTransaction& tx) -> Status {
      ++runs;
      Result<db::PgResult> updated = PostgresBarrierStore::Connection(tx)->Query(
          "UPDATE account SET balance = balance - 30, frozen = frozen + 30 "
          "WHERE id = 1 AND balance >= 30");
      if (!updated) return updated.status();
      if (updated->affected() == 0) return Status::Conflict("insufficient funds");
      return Status::Ok();
    };
  }
  Barrier::Business Confirm() { return Counted("UPDATE account SET frozen = frozen - 30"); }
  Barrier::Business Cancel() {
    return Counted("UPDATE account SET balance = balance + 30, frozen = frozen - 30");
  }

  Account account() {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    Result<db::PgResult> rows =
        PostgresBarrierStore::Connection(**tx)->Query("SELECT balance, frozen FROM account");
    REQUIRE(rows);
    REQUIRE(rows->rows() == 1);
    return {rows->Int(0, 0), rows->Int(0, 1)};
  }
  std::int64_t barrier_rows() {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    Result<db::PgResult> rows =
        PostgresBarrierStore::Connection(**tx)->Query("SELECT count(*) FROM barrier");
    REQUIRE(rows);
    return rows->Int(0, 0);
  }

 private:
  Barrier::Business Counted(std::string sql) {
    return [this, sql](BarrierTransaction& tx) {
      ++runs;
      return PostgresBarrierStore::Connection(tx)->Run(sql);
    };
  }

  PostgresTestDatabase database_;
  FakeClock clock_;
  std::unique_ptr<PostgresBarrierStore> store_;
  std::unique_ptr<Barrier> barrier_;
};

BranchRequest Request(BranchOp op, std::string gid = "g1") {
  BranchRequest request;
  request.gid = std::move(gid);
  request.branch_id = "01";
  request.op = op;
  request.trans_type = TransType::kTcc;
  return request;
}

const Account kUntouched{kOpeningBalance, 0};
const Account kReserved{kOpeningBalance - 30, 30};
const Account kSpent{kOpeningBalance - 30, 0};

TEST_CASE("postgres barrier: try, duplicate try, confirm and duplicate confirm take effect once",
          "[barrier][postgres]") {
  Bank bank;
  CHECK(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).seen == BarrierCase::kFirstCall);
  CHECK(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).seen == BarrierCase::kDuplicate);
  CHECK(bank.account() == kReserved);
  CHECK(bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm()).seen ==
        BarrierCase::kFirstCall);
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(again.reply.status.ok());
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kSpent);
}

TEST_CASE("postgres barrier: a cancel without a try is an empty rollback and the late try hangs",
          "[barrier][postgres]") {
  Bank bank;
  CHECK(bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel()).seen ==
        BarrierCase::kEmptyRollback);
  BarrierResult late_try = bank.barrier().Call(Request(BranchOp::kTry), bank.Try());
  CHECK(late_try.seen == BarrierCase::kHanging);
  CHECK(late_try.reply.status.code() == StatusCode::kConflict);
  CHECK(bank.runs == 0);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("postgres barrier: a business error rolls back its change and the barrier rows",
          "[barrier][postgres]") {
  Bank bank;
  BarrierResult failed =
      bank.barrier().Call(Request(BranchOp::kTry), [](BarrierTransaction& tx) -> Status {
        db::PgConnection* c = PostgresBarrierStore::Connection(tx);
        if (Status s = c->Run("UPDATE account SET balance = 0"); !s.ok()) return s;
        return Status::Unavailable("the business gave up");
      });
  CHECK(failed.reply.status.code() == StatusCode::kUnavailable);
  CHECK(bank.account() == kUntouched);
  CHECK(bank.barrier_rows() == 0);

  // A failed statement poisons the transaction: the barrier must not report it committed.
  BarrierResult broken =
      bank.barrier().Call(Request(BranchOp::kTry), [](BarrierTransaction& tx) -> Status {
        PostgresBarrierStore::Connection(tx)->Run("UPDATE no_such_table SET x = 1").IgnoreError();
        return Status::Ok();
      });
  CHECK_FALSE(broken.reply.status.ok());
  CHECK(bank.barrier_rows() == 0);
  // And the retry runs the business for real.
  CHECK(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).seen == BarrierCase::kFirstCall);
  CHECK(bank.account() == kReserved);
}

TEST_CASE(
    "postgres barrier: a try and its cancel racing on two connections never leave money "
    "frozen",
    "[barrier][postgres]") {
  Bank bank;
  constexpr int kRounds = 40;
  std::vector<std::string> failures;
  for (int round = 0; round < kRounds; ++round) {
    const std::string gid = "race-" + std::to_string(round);
    std::latch start(2);
    BarrierResult try_result;
    BarrierResult cancel_result;
    std::thread t([&] {
      start.arrive_and_wait();
      try_result = bank.barrier().Call(Request(BranchOp::kTry, gid), bank.Try());
    });
    start.arrive_and_wait();
    cancel_result = bank.barrier().Call(Request(BranchOp::kCancel, gid), bank.Cancel());
    t.join();
    if (!try_result.reply.status.ok() && try_result.seen != BarrierCase::kHanging) {
      failures.push_back(gid + " try: " + try_result.reply.status.ToString());
    }
    if (!cancel_result.reply.status.ok()) {
      failures.push_back(gid + " cancel: " + cancel_result.reply.status.ToString());
    }
  }
  CHECK(failures.empty());
  // Whichever came first, the cancel ran after the try or made it hang: nothing stays frozen.
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("postgres barrier: the same confirm delivered on four connections at once runs once",
          "[barrier][postgres]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).reply.status.ok());
  std::latch start(4);
  std::vector<BarrierResult> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm());
    });
  }
  for (std::thread& t : threads) t.join();
  int first = 0;
  for (const BarrierResult& r : results) {
    CHECK(r.reply.status.ok());
    if (r.seen == BarrierCase::kFirstCall) ++first;
  }
  CHECK(first == 1);
  CHECK(bank.account() == kSpent);
}

TEST_CASE("postgres barrier: cleanup deletes rows older than the retention in batches",
          "[barrier][postgres]") {
  Bank bank;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(bank.barrier()
                .Call(Request(BranchOp::kConfirm, "old-" + std::to_string(i)), bank.Confirm())
                .reply.status.ok());
  }
  bank.clock().Advance(std::chrono::hours(48));
  REQUIRE(
      bank.barrier().Call(Request(BranchOp::kConfirm, "new"), bank.Confirm()).reply.status.ok());

  Result<std::size_t> deleted = bank.barrier().Cleanup(std::chrono::hours(24), 2);

  REQUIRE(deleted);
  CHECK(*deleted == 5);
  CHECK(bank.barrier_rows() == 1);
}

TEST_CASE("postgres barrier: two participant processes start together on one database",
          "[barrier][postgres]") {
  PostgresTestDatabase database;
  std::vector<Status> opened(3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto store = PostgresBarrierStore::Open(database.conninfo());
      opened[i] = store ? Status::Ok() : store.status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : opened) {
    INFO(s.ToString());
    CHECK(s.ok());
  }
}

}  // namespace
}  // namespace settle::sdk
