// The participant barrier of docs/protocol.md §6.3, case by case, on a real SQLite file: a bank
// account whose Try reserves money (balance -> frozen), Confirm spends it and Cancel releases
// it; a saga action debits and its compensation credits back.
#include "settle/sdk/barrier.h"

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace Catch {
template <>
struct StringMaker<settle::sdk::BarrierCase> {
  static std::string convert(settle::sdk::BarrierCase c) {
    return std::string(settle::sdk::ToString(c));
  }
};
template <>
struct StringMaker<settle::StatusCode> {
  static std::string convert(settle::StatusCode c) {
    return std::string(settle::StatusCodeName(c));
  }
};
}  // namespace Catch

namespace settle::sdk {
namespace {

using settle::testing::FakeClock;
using settle::testing::TempDir;

constexpr std::int64_t kOpeningBalance = 100;
constexpr std::int64_t kAmount = 30;

struct Account {
  std::int64_t balance = 0;
  std::int64_t frozen = 0;
  bool operator==(const Account&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Account& a) {
  return os << "{balance " << a.balance << ", frozen " << a.frozen << "}";
}

// Runs the business's own SQL on the barrier transaction's connection.
Status Sql(BarrierTransaction& tx, const std::string& sql) {
  sqlite3* db = SqliteBarrierStore::Connection(tx);
  if (db == nullptr) return Status::Internal("not a SQLite barrier transaction");
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Status::Unavailable(sqlite3_errmsg(db));
  }
  return Status::Ok();
}

// A participant with one account (id 1) and a barrier in the same file. Each business
// function counts its runs, so that a test can tell "skipped" from "ran and rolled back".
class Bank {
 public:
  Bank() {
    Result<std::unique_ptr<SqliteBarrierStore>> opened =
        SqliteBarrierStore::Open(dir_.File("bank.db"));
    INFO(opened.status().ToString());
    REQUIRE(opened);
    store_ = std::move(opened).value();
    barrier_ = std::make_unique<Barrier>(*store_, clock_);
    REQUIRE(Write("CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, "
                  "frozen INTEGER NOT NULL);"
                  "INSERT INTO account VALUES (1, " +
                  std::to_string(kOpeningBalance) + ", 0)")
                .ok());
  }

  Barrier& barrier() { return *barrier_; }
  FakeClock& clock() { return clock_; }
  int runs = 0;

  // TCC: reserve, spend, release. Saga: debit, credit back.
  Barrier::Business Try() {
    return [this](BarrierTransaction& tx) -> Status {
      ++runs;
      Status s = Sql(tx,
                     "UPDATE account SET balance = balance - 30, frozen = frozen + 30 "
                     "WHERE id = 1 AND balance >= 30");
      if (!s.ok()) return s;
      if (sqlite3_changes(SqliteBarrierStore::Connection(tx)) == 0) {
        return Status::Conflict("insufficient funds");
      }
      return Status::Ok();
    };
  }
  Barrier::Business Confirm() { return Counted("UPDATE account SET frozen = frozen - 30"); }
  Barrier::Business Cancel() {
    return Counted("UPDATE account SET balance = balance + 30, frozen = frozen - 30");
  }
  Barrier::Business Action() { return Counted("UPDATE account SET balance = balance - 30"); }
  Barrier::Business Compensate() { return Counted("UPDATE account SET balance = balance + 30"); }
  // Changes the account, then fails with `status`: the change must not survive.
  Barrier::Business ChangesThenFails(Status status) {
    return [this, status](BarrierTransaction& tx) -> Status {
      ++runs;
      Status s = Sql(tx, "UPDATE account SET balance = 0");
      return s.ok() ? status : s;
    };
  }

  Account account() {
    std::vector<std::vector<std::string>> rows = Query("SELECT balance, frozen FROM account");
    REQUIRE(rows.size() == 1);
    return {std::stoll(rows[0][0]), std::stoll(rows[0][1])};
  }
  std::size_t barrier_rows() { return Query("SELECT 1 FROM barrier").size(); }

  // Reads through a transaction of the store, as business code would, and rolls it back.
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    std::vector<std::vector<std::string>> rows;
    auto collect = [](void* out, int n, char** values, char**) {
      auto& rows = *static_cast<std::vector<std::vector<std::string>>*>(out);
      rows.emplace_back();
      for (int i = 0; i < n; ++i) rows.back().emplace_back(values[i] ? values[i] : "NULL");
      return 0;
    };
    REQUIRE(sqlite3_exec(SqliteBarrierStore::Connection(**tx), sql.c_str(), collect, &rows,
                         nullptr) == SQLITE_OK);
    return rows;
  }

 private:
  Barrier::Business Counted(std::string sql) {
    return [this, sql](BarrierTransaction& tx) {
      ++runs;
      return Sql(tx, sql);
    };
  }
  Status Write(const std::string& sql) {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    if (!tx) return tx.status();
    Status s = Sql(**tx, sql);
    return s.ok() ? (*tx)->Commit() : s;
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<SqliteBarrierStore> store_;
  std::unique_ptr<Barrier> barrier_;
};

BranchRequest Request(BranchOp op, std::string gid = "g1", std::string branch_id = "01") {
  BranchRequest request;
  request.gid = std::move(gid);
  request.branch_id = std::move(branch_id);
  request.op = op;
  request.trans_type =
      (op == BranchOp::kAction || op == BranchOp::kCompensate) ? TransType::kSaga : TransType::kTcc;
  if (op == BranchOp::kRollback || op == BranchOp::kCommit)
    request.trans_type = TransType::kWorkflow;
  return request;
}

// A workflow step's action (docs/protocol.md §3.16): op action, trans_type workflow.
BranchRequest WorkflowAction() {
  BranchRequest request = Request(BranchOp::kAction);
  request.trans_type = TransType::kWorkflow;
  return request;
}

const Account kUntouched{kOpeningBalance, 0};
const Account kReserved{kOpeningBalance - kAmount, kAmount};
const Account kSpent{kOpeningBalance - kAmount, 0};

TEST_CASE("a first try runs its business and commits it with its barrier row", "[barrier]") {
  Bank bank;
  BarrierResult r = bank.barrier().Call(Request(BranchOp::kTry), bank.Try());
  CHECK(r.seen == BarrierCase::kFirstCall);
  CHECK(r.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 1);
  CHECK(bank.account() == kReserved);
  CHECK(bank.barrier_rows() == 1);
}

TEST_CASE("barrier rows record the call: type, gid, branch, op, barrier id, reason, time",
          "[barrier]") {
  Bank bank;
  const std::string t0 = std::to_string(ToUnixMillis(bank.clock().Now()));
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).reply.status.ok());
  bank.clock().Advance(Duration(1500));
  const std::string t1 = std::to_string(ToUnixMillis(bank.clock().Now()));
  REQUIRE(bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kCancel, "g2"), bank.Cancel()).reply.status.ok());

  using Row = std::vector<std::string>;
  CHECK(bank.Query("SELECT trans_type, gid, branch_id, op, barrier_id, reason, create_time "
                   "FROM barrier ORDER BY gid, op") ==
        std::vector<Row>{{"tcc", "g1", "01", "cancel", "01", "cancel", t1},
                         {"tcc", "g1", "01", "try", "01", "try", t0},
                         // the empty rollback of g2 left both rows, the try's with reason cancel
                         {"tcc", "g2", "01", "cancel", "01", "cancel", t1},
                         {"tcc", "g2", "01", "try", "01", "cancel", t1}});
}

TEST_CASE("a duplicate try is skipped with SUCCESS and reserves only once", "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).seen == BarrierCase::kFirstCall);
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kTry), bank.Try());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(again.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 1);
  CHECK(bank.account() == kReserved);
}

TEST_CASE("a cancel after a try runs the cancel and releases the reservation", "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).reply.status.ok());
  BarrierResult cancel = bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel());
  CHECK(cancel.seen == BarrierCase::kFirstCall);
  CHECK(cancel.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a cancel without a try is an empty rollback, and the late try then hangs", "[barrier]") {
  Bank bank;
  BarrierResult cancel = bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel());
  CHECK(cancel.seen == BarrierCase::kEmptyRollback);
  CHECK(cancel.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 0);

  BarrierResult late_try = bank.barrier().Call(Request(BranchOp::kTry), bank.Try());
  CHECK(late_try.seen == BarrierCase::kHanging);
  CHECK(late_try.reply.status.code() == StatusCode::kConflict);  // 409 FAILURE
  CHECK(bank.runs == 0);
  CHECK(bank.account() == kUntouched);  // nothing stays reserved
}

TEST_CASE("an empty rollback delivered twice never runs the cancel business", "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel()).seen ==
          BarrierCase::kEmptyRollback);
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(again.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 0);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a duplicate confirm is applied once", "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).reply.status.ok());
  CHECK(bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm()).seen ==
        BarrierCase::kFirstCall);
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(again.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kSpent);
}

TEST_CASE("a duplicate cancel is applied once", "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel()).reply.status.ok());
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(again.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a try delivered again after its cancel is a duplicate, not a new reservation",
          "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kCancel), bank.Cancel()).reply.status.ok());
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kTry), bank.Try());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a duplicate compensate is applied once", "[barrier][saga]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kAction), bank.Action()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kCompensate), bank.Compensate()).seen ==
          BarrierCase::kFirstCall);
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kCompensate), bank.Compensate());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(again.reply.status.code() == StatusCode::kOk);
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("an empty compensate makes the late action hang", "[barrier][saga]") {
  Bank bank;
  BarrierResult compensate = bank.barrier().Call(Request(BranchOp::kCompensate), bank.Compensate());
  CHECK(compensate.seen == BarrierCase::kEmptyRollback);
  CHECK(compensate.reply.status.code() == StatusCode::kOk);

  BarrierResult late_action = bank.barrier().Call(Request(BranchOp::kAction), bank.Action());
  CHECK(late_action.seen == BarrierCase::kHanging);
  CHECK(late_action.reply.status.code() == StatusCode::kConflict);
  CHECK(bank.runs == 0);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a workflow step's rollback after its action undoes it once", "[barrier][workflow]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(WorkflowAction(), bank.Action()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kRollback), bank.Compensate()).seen ==
          BarrierCase::kFirstCall);
  BarrierResult again = bank.barrier().Call(Request(BranchOp::kRollback), bank.Compensate());
  CHECK(again.seen == BarrierCase::kDuplicate);
  CHECK(bank.runs == 2);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a workflow step's rollback before its action is empty, and the late action hangs",
          "[barrier][workflow]") {
  Bank bank;
  BarrierResult rollback = bank.barrier().Call(Request(BranchOp::kRollback), bank.Compensate());
  CHECK(rollback.seen == BarrierCase::kEmptyRollback);
  CHECK(rollback.reply.status.code() == StatusCode::kOk);

  BarrierResult late_action = bank.barrier().Call(WorkflowAction(), bank.Action());
  CHECK(late_action.seen == BarrierCase::kHanging);
  CHECK(late_action.reply.status.code() == StatusCode::kConflict);
  CHECK(bank.runs == 0);
  CHECK(bank.account() == kUntouched);
}

TEST_CASE("a confirm without a try just runs once", "[barrier]") {
  Bank bank;
  CHECK(bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm()).seen ==
        BarrierCase::kFirstCall);
  CHECK(bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm()).seen ==
        BarrierCase::kDuplicate);
  CHECK(bank.runs == 1);
  CHECK(bank.account() == Account{kOpeningBalance, -kAmount});
}

TEST_CASE("a business error rolls back the barrier rows so that a retry runs it again",
          "[barrier]") {
  Status failure = GENERATE(Status::Unavailable("ledger down"), Status::Internal("bug"));
  Bank bank;
  BarrierResult failed =
      bank.barrier().Call(Request(BranchOp::kConfirm), bank.ChangesThenFails(failure));
  CHECK(failed.seen == BarrierCase::kFirstCall);
  CHECK(failed.reply.status.code() == failure.code());  // a 500: the coordinator retries
  CHECK(failed.reply.status.message() == failure.message());
  CHECK(bank.account() == kUntouched);
  CHECK(bank.barrier_rows() == 0);

  BarrierResult retry = bank.barrier().Call(Request(BranchOp::kConfirm), bank.Confirm());
  CHECK(retry.seen == BarrierCase::kFirstCall);
  CHECK(retry.reply.status.ok());
  CHECK(bank.runs == 2);
  CHECK(bank.account() == Account{kOpeningBalance, -kAmount});
}

TEST_CASE("a business Conflict answers 409, leaves nothing, and the cancel is then empty",
          "[barrier]") {
  Bank bank;
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry, "rich"), bank.Try()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry, "rich2"), bank.Try()).reply.status.ok());
  REQUIRE(bank.barrier().Call(Request(BranchOp::kTry, "rich3"), bank.Try()).reply.status.ok());
  const Account before = bank.account();  // 10 left: not enough for another 30
  REQUIRE(before == Account{10, 90});

  BarrierResult poor = bank.barrier().Call(Request(BranchOp::kTry, "poor"), bank.Try());
  CHECK(poor.seen == BarrierCase::kFirstCall);
  CHECK(poor.reply.status.code() == StatusCode::kConflict);
  CHECK(poor.reply.status.message() == "insufficient funds");
  CHECK(bank.account() == before);
  CHECK(bank.Query("SELECT 1 FROM barrier WHERE gid = 'poor'").empty());

  BarrierResult cancel = bank.barrier().Call(Request(BranchOp::kCancel, "poor"), bank.Cancel());
  CHECK(cancel.seen == BarrierCase::kEmptyRollback);
  CHECK(cancel.reply.status.ok());
  CHECK(bank.account() == before);
}

TEST_CASE("a Pending business answers ONGOING (425) and rolls back", "[barrier]") {
  Bank bank;
  BarrierResult r = bank.barrier().Call(Request(BranchOp::kConfirm),
                                        bank.ChangesThenFails(Status::Pending("bank is busy")));
  CHECK(r.seen == BarrierCase::kFirstCall);
  CHECK(r.reply.status.code() == StatusCode::kPending);
  CHECK(bank.account() == kUntouched);
  CHECK(bank.barrier_rows() == 0);
}

TEST_CASE("a business that throws answers 500 with its message and rolls back", "[barrier]") {
  Bank bank;
  Barrier::Business throws = [&](BarrierTransaction& tx) -> Status {
    ++bank.runs;
    REQUIRE(Sql(tx, "UPDATE account SET balance = 0").ok());
    throw std::runtime_error("ledger exploded");
  };
  BarrierResult r = bank.barrier().Call(Request(BranchOp::kTry), throws);
  CHECK(r.seen == BarrierCase::kFirstCall);
  CHECK(r.reply.status.code() == StatusCode::kInternal);
  CHECK_THAT(r.reply.status.message(), Catch::Contains("ledger exploded"));
  CHECK(bank.account() == kUntouched);
  CHECK(bank.barrier_rows() == 0);

  CHECK(bank.barrier().Call(Request(BranchOp::kTry), bank.Try()).seen == BarrierCase::kFirstCall);
  CHECK(bank.account() == kReserved);
}

TEST_CASE("two guarded sections of one handler (barrier ids 01 and 02) are independent",
          "[barrier]") {
  Bank bank;
  // The handler debits in section 01 and records a fee in section 02; the first delivery's
  // second section fails.
  auto handler = [&](Barrier::Business second) {
    BarrierResult first = bank.barrier().Call(Request(BranchOp::kAction), bank.Action(), "01");
    BarrierResult fee = bank.barrier().Call(Request(BranchOp::kAction), second, "02");
    return std::make_pair(first.seen, fee);
  };
  auto [first_seen, fee] = handler(bank.ChangesThenFails(Status::Unavailable("fee table")));
  CHECK(first_seen == BarrierCase::kFirstCall);
  CHECK(fee.reply.status.code() == StatusCode::kUnavailable);
  CHECK(bank.account() == Account{kOpeningBalance - kAmount, 0});

  // Redelivered: section 01 is a duplicate, section 02 runs now.
  auto [again_seen, again_fee] = handler(bank.Action());
  CHECK(again_seen == BarrierCase::kDuplicate);
  CHECK(again_fee.seen == BarrierCase::kFirstCall);
  CHECK(again_fee.reply.status.ok());
  CHECK(bank.account() == Account{kOpeningBalance - 2 * kAmount, 0});
  CHECK(bank.Query("SELECT barrier_id FROM barrier ORDER BY barrier_id") ==
        std::vector<std::vector<std::string>>{{"01"}, {"02"}});
}

TEST_CASE("barrier cases have stable names", "[barrier]") {
  CHECK(ToString(BarrierCase::kFirstCall) == "first_call");
  CHECK(ToString(BarrierCase::kDuplicate) == "duplicate");
  CHECK(ToString(BarrierCase::kEmptyRollback) == "empty_rollback");
  CHECK(ToString(BarrierCase::kHanging) == "hanging");
}

}  // namespace
}  // namespace settle::sdk
