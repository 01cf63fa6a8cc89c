// The bank's branch URLs over real HTTP, one barrier case at a time: what each call answers and
// what it leaves in the accounts.
#include <catch2/catch.hpp>

#include "bank_db.h"
#include "bank_fixture.h"
#include "temp_dir.h"
#include "transfer_request.h"

namespace settle::bank {
namespace {

constexpr std::int64_t kTotal = 100000;  // 10 accounts x 10000
const AccountState kUntouched{10000, 0};

struct Fixture {
  settle::testing::TempDir dir;
  RunningBank bank{dir.File("bank.db")};
};

void CheckSuccess(const settle::testing::JsonResponse& r) {
  INFO(r.body);
  CHECK(r.status == 200);
  CHECK(r.json["dtm_result"] == "SUCCESS");
}

void CheckFailure(const settle::testing::JsonResponse& r) {
  INFO(r.body);
  CHECK(r.status == 409);
  CHECK(r.json["dtm_result"] == "FAILURE");
}

TEST_CASE("a TransOut Try reserves the amount: balance to frozen", "[bank][tcc]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 30));
  CHECK(f.bank.Account("1") == AccountState{9970, 30});
  CHECK(f.bank.Account("2") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a duplicate TransOut Try reserves once", "[bank][tcc][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 30));
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 30));
  CHECK(f.bank.Account("1") == AccountState{9970, 30});
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a TransOut Cancel after its Try releases the reservation", "[bank][tcc]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 30));
  CheckSuccess(f.bank.Tcc("/api/TransOutCancel", "cancel", "1", 30));
  CHECK(f.bank.Account("1") == kUntouched);
  CheckSuccess(f.bank.Tcc("/api/TransOutCancel", "cancel", "1", 30));  // a duplicate
  CHECK(f.bank.Account("1") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("an empty Cancel changes nothing and the late Try is refused", "[bank][tcc][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransOutCancel", "cancel", "1", 30));
  CHECK(f.bank.Account("1") == kUntouched);
  CheckFailure(f.bank.Tcc("/api/TransOutTry", "try", "1", 30));
  CHECK(f.bank.Account("1") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a duplicate TransOut Confirm spends the reservation once", "[bank][tcc][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 30));
  CheckSuccess(f.bank.Tcc("/api/TransOutConfirm", "confirm", "1", 30));
  CheckSuccess(f.bank.Tcc("/api/TransOutConfirm", "confirm", "1", 30));
  CHECK(f.bank.Account("1") == AccountState{9970, 0});
  CHECK(f.bank.Total() == kTotal - 30);
}

// A Confirm's body is the registration's, which need not be what its Try was sent (an unsigned
// Try, a workflow's own calls): phase 2 applies what the Try froze, never what it is told.
TEST_CASE("a TransOut Confirm or Cancel applies what its own Try froze, not what its body says",
          "[bank][tcc]") {
  Fixture f;
  // Another transfer's money, frozen at account 1: what a Confirm that trusted its body would
  // spend.
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 500, "other", "01"));
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "3", 5, "g1", "01"));
  CHECK(f.bank.Rows("freeze") == 2);

  CheckSuccess(f.bank.Tcc("/api/TransOutConfirm", "confirm", "1", 500, "g1", "01"));
  CHECK(f.bank.Account("3") == AccountState{9995, 0});    // its own 5, spent
  CHECK(f.bank.Account("1") == AccountState{9500, 500});  // the other transfer's, untouched

  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "3", 5, "g2", "01"));
  CheckSuccess(f.bank.Tcc("/api/TransOutCancel", "cancel", "1", 500, "g2", "01"));
  CHECK(f.bank.Account("3") == AccountState{9995, 0});    // its own 5, released
  CHECK(f.bank.Account("1") == AccountState{9500, 500});  // not released by a body's say
  CHECK(f.bank.Rows("freeze") == 1);
  CHECK(f.bank.Total() == kTotal - 5);
}

TEST_CASE("a TransIn Try records a pending credit that its Confirm applies once",
          "[bank][tcc][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "2", 30));
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "2", 30));  // a duplicate
  CHECK(f.bank.Rows("pending_credit") == 1);
  CHECK(f.bank.Account("2") == kUntouched);  // not money yet
  CHECK(f.bank.Total() == kTotal);
  CheckSuccess(f.bank.Tcc("/api/TransInConfirm", "confirm", "2", 30));
  CheckSuccess(f.bank.Tcc("/api/TransInConfirm", "confirm", "2", 30));
  CHECK(f.bank.Account("2") == AccountState{10030, 0});
  CHECK(f.bank.Rows("pending_credit") == 0);
  CHECK(f.bank.Total() == kTotal + 30);
}

TEST_CASE("a TransIn Cancel drops the pending credit", "[bank][tcc]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "2", 30));
  CheckSuccess(f.bank.Tcc("/api/TransInCancel", "cancel", "2", 30));
  CheckSuccess(f.bank.Tcc("/api/TransInCancel", "cancel", "2", 30));
  CHECK(f.bank.Rows("pending_credit") == 0);
  CHECK(f.bank.Account("2") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("pending credits are kept per gid and branch", "[bank][tcc]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "2", 30, "g1", "01"));
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "2", 5, "g1", "02"));
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "3", 7, "g2", "01"));
  CheckSuccess(f.bank.Tcc("/api/TransInConfirm", "confirm", "2", 5, "g1", "02"));
  CheckSuccess(f.bank.Tcc("/api/TransInCancel", "cancel", "3", 7, "g2", "01"));
  CHECK(f.bank.Account("2") == AccountState{10005, 0});
  CHECK(f.bank.Account("3") == kUntouched);
  CHECK(f.bank.Rows("pending_credit") == 1);
}

TEST_CASE("a TransIn Try for an unknown account is refused", "[bank][tcc]") {
  Fixture f;
  CheckFailure(f.bank.Tcc("/api/TransInTry", "try", "11", 30));
  CHECK(f.bank.Rows("pending_credit") == 0);
  CheckSuccess(f.bank.Tcc("/api/TransInCancel", "cancel", "11", 30));  // an empty rollback
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a Try short of funds is refused and reserves nothing, and its Cancel is empty",
          "[bank][tcc][barrier]") {
  Fixture f;
  const auto r = f.bank.Tcc("/api/TransOutTry", "try", "1", 10001);
  CheckFailure(r);
  CHECK(r.json["message"].get<std::string>().find("insufficient funds") != std::string::npos);
  CHECK(f.bank.Account("1") == kUntouched);
  CheckSuccess(f.bank.Tcc("/api/TransOutCancel", "cancel", "1", 10001));
  CHECK(f.bank.Account("1") == kUntouched);
  CheckFailure(f.bank.Tcc("/api/TransOutTry", "try", "42", 1, "g2"));  // an unknown account
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a Try of the whole balance is allowed", "[bank][tcc]") {
  Fixture f;
  CheckSuccess(f.bank.Tcc("/api/TransOutTry", "try", "1", 10000));
  CHECK(f.bank.Account("1") == AccountState{0, 10000});
  CheckFailure(f.bank.Tcc("/api/TransOutTry", "try", "1", 1, "g2"));
}

TEST_CASE("a saga TransOut debits once, even when delivered twice", "[bank][saga][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Saga("/api/TransOut", "action", "1", 30));
  CheckSuccess(f.bank.Saga("/api/TransOut", "action", "1", 30));
  CHECK(f.bank.Account("1") == AccountState{9970, 0});
  CHECK(f.bank.Total() == kTotal - 30);
}

TEST_CASE("a duplicate TransOut Compensate credits back once", "[bank][saga][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Saga("/api/TransOut", "action", "1", 30));
  CheckSuccess(f.bank.Saga("/api/TransOutCompensate", "compensate", "1", 30));
  CheckSuccess(f.bank.Saga("/api/TransOutCompensate", "compensate", "1", 30));
  CHECK(f.bank.Account("1") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("an empty Compensate changes nothing and the late action is refused",
          "[bank][saga][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Saga("/api/TransOutCompensate", "compensate", "1", 30));
  CHECK(f.bank.Account("1") == kUntouched);
  CheckFailure(f.bank.Saga("/api/TransOut", "action", "1", 30));
  CHECK(f.bank.Account("1") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a saga TransOut short of funds is refused, and its Compensate is empty",
          "[bank][saga]") {
  Fixture f;
  CheckFailure(f.bank.Saga("/api/TransOut", "action", "1", 10001));
  CheckSuccess(f.bank.Saga("/api/TransOutCompensate", "compensate", "1", 10001));
  CHECK(f.bank.Account("1") == kUntouched);
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a saga TransIn credits once and its Compensate debits it back once",
          "[bank][saga][barrier]") {
  Fixture f;
  CheckSuccess(f.bank.Saga("/api/TransIn", "action", "2", 30));
  CheckSuccess(f.bank.Saga("/api/TransIn", "action", "2", 30));
  CHECK(f.bank.Account("2") == AccountState{10030, 0});
  CheckSuccess(f.bank.Saga("/api/TransInCompensate", "compensate", "2", 30));
  CheckSuccess(f.bank.Saga("/api/TransInCompensate", "compensate", "2", 30));
  CHECK(f.bank.Account("2") == kUntouched);
  CheckFailure(f.bank.Saga("/api/TransIn", "action", "11", 30, "g2"));  // an unknown account
  CHECK(f.bank.Total() == kTotal);
}

TEST_CASE("a TransIn compensation succeeds even when the credit was spent meanwhile",
          "[bank][saga]") {
  Fixture f;
  CheckSuccess(f.bank.Saga("/api/TransIn", "action", "2", 30, "g1"));
  CheckSuccess(f.bank.Saga("/api/TransOut", "action", "2", 10030, "g2"));
  CheckSuccess(f.bank.Saga("/api/TransInCompensate", "compensate", "2", 30, "g1"));
  CHECK(f.bank.Account("2") == AccountState{-30, 0});  // an overdraft, not a stuck saga
}

TEST_CASE("a credit that would take an account above 10^18 is refused", "[bank][saga]") {
  Fixture f;
  f.bank.Execute("UPDATE account SET balance = 999000000000000000 WHERE account_id = '1'");
  CheckSuccess(f.bank.Tcc("/api/TransInTry", "try", "1", kMaxAmount, "t1"));
  // The pending credit counts: the account is full.
  CheckFailure(f.bank.Saga("/api/TransIn", "action", "1", 1, "s1"));
  CheckFailure(f.bank.Tcc("/api/TransInTry", "try", "1", 1, "t2"));
  CheckSuccess(f.bank.Tcc("/api/TransInConfirm", "confirm", "1", kMaxAmount, "t1"));
  CHECK(f.bank.Account("1") == AccountState{kMaxHoldings, 0});
  CheckSuccess(f.bank.Saga("/api/TransIn", "action", "2", kMaxAmount, "s2"));  // others are not
}

TEST_CASE("a branch URL refuses a call for another op", "[bank]") {
  Fixture f;
  // 409 FAILURE, as any branch request the SDK cannot accept (docs/protocol.md §6.2).
  const auto r = f.bank.Tcc("/api/TransOutTry", "cancel", "1", 30);
  CHECK(r.status == 409);
  CHECK(f.bank.Saga("/api/TransOut", "compensate", "1", 30).status == 409);
  CHECK(f.bank.Rows("barrier") == 0);
  CHECK(f.bank.Account("1") == kUntouched);
}

}  // namespace
}  // namespace settle::bank
