// Whole transfers between two in-process banks, each branch URL called in the order the
// coordinator calls it: money is conserved whether the transfer commits or rolls back.
#include <catch2/catch.hpp>

#include "bank_fixture.h"
#include "temp_dir.h"

namespace settle::bank {
namespace {

constexpr std::int64_t kBankTotal = 100000;

// Bank A pays from its account "1", bank B receives into its account "2".
struct TwoBanks {
  settle::testing::TempDir dir;
  RunningBank a{dir.File("bank-a.db")};
  RunningBank b{dir.File("bank-b.db")};

  void CheckConserved() { CHECK(a.Total() + b.Total() == 2 * kBankTotal); }
};

TEST_CASE("a TCC transfer moves the money from one bank to the other", "[bank][tcc][transfer]") {
  TwoBanks w;
  // The client: each Try once its branch is registered; then the coordinator confirms all.
  CHECK(w.a.Tcc("/api/TransOutTry", "try", "1", 500, "tcc-1", "01").status == 200);
  CHECK(w.b.Tcc("/api/TransInTry", "try", "2", 500, "tcc-1", "02").status == 200);
  CHECK(w.a.Account("1") == AccountState{9500, 500});
  CHECK(w.a.Total() + w.b.Total() == 2 * kBankTotal);  // reserved, not yet moved
  CHECK(w.b.Tcc("/api/TransInConfirm", "confirm", "2", 500, "tcc-1", "02").status == 200);
  CHECK(w.a.Tcc("/api/TransOutConfirm", "confirm", "1", 500, "tcc-1", "01").status == 200);
  // A retried Confirm after a lost answer.
  CHECK(w.a.Tcc("/api/TransOutConfirm", "confirm", "1", 500, "tcc-1", "01").status == 200);

  CHECK(w.a.Account("1") == AccountState{9500, 0});
  CHECK(w.b.Account("2") == AccountState{10500, 0});
  CHECK(w.a.Total() == kBankTotal - 500);
  CHECK(w.b.Total() == kBankTotal + 500);
  CHECK(w.b.Rows("pending_credit") == 0);
  w.CheckConserved();
}

TEST_CASE("a TCC transfer whose TransIn Try fails is cancelled everywhere",
          "[bank][tcc][transfer]") {
  TwoBanks w;
  CHECK(w.a.Tcc("/api/TransOutTry", "try", "1", 500, "tcc-2", "01").status == 200);
  CHECK(w.b.Tcc("/api/TransInTry", "try", "99", 500, "tcc-2", "02").status == 409);
  // The client aborts; the coordinator cancels every registered branch.
  CHECK(w.b.Tcc("/api/TransInCancel", "cancel", "99", 500, "tcc-2", "02").status == 200);
  CHECK(w.a.Tcc("/api/TransOutCancel", "cancel", "1", 500, "tcc-2", "01").status == 200);

  CHECK(w.a.Account("1") == AccountState{10000, 0});
  CHECK(w.b.Account("2") == AccountState{10000, 0});
  CHECK(w.b.Rows("pending_credit") == 0);
  w.CheckConserved();
}

TEST_CASE("a Confirm that finds no hold of its Try is a 500 and moves no money",
          "[bank][tcc][transfer][upgrade]") {
  // A Try from a build that kept no freeze or pending-credit row (the README's upgrade note):
  // the Confirm must not apply its body, whatever it says.
  TwoBanks w;
  CHECK(w.a.Tcc("/api/TransOutTry", "try", "1", 500, "tcc-4", "01").status == 200);
  CHECK(w.b.Tcc("/api/TransInTry", "try", "2", 500, "tcc-4", "02").status == 200);
  w.a.Execute("DELETE FROM freeze");
  w.b.Execute("DELETE FROM pending_credit");

  const auto out = w.a.Tcc("/api/TransOutConfirm", "confirm", "1", 500, "tcc-4", "01");
  CHECK(out.status == 500);
  CHECK(out.body.find("no freeze for gid tcc-4 branch 01") != std::string::npos);
  const auto in = w.b.Tcc("/api/TransInConfirm", "confirm", "2", 500, "tcc-4", "02");
  CHECK(in.status == 500);
  CHECK(in.body.find("no pending credit for gid tcc-4 branch 02") != std::string::npos);

  CHECK(w.a.Account("1") == AccountState{9500, 500});  // still frozen, not spent
  CHECK(w.b.Account("2") == AccountState{10000, 0});   // nothing credited
}

TEST_CASE("a TCC transfer short of funds is cancelled, the TransIn Try never ran",
          "[bank][tcc][transfer]") {
  TwoBanks w;
  CHECK(w.a.Tcc("/api/TransOutTry", "try", "1", 20000, "tcc-3", "01").status == 409);
  CHECK(w.a.Tcc("/api/TransOutCancel", "cancel", "1", 20000, "tcc-3", "01").status == 200);
  CHECK(w.b.Tcc("/api/TransInCancel", "cancel", "2", 20000, "tcc-3", "02").status == 200);
  // A delayed Try arriving after the cancel must not leave a pending credit behind.
  CHECK(w.b.Tcc("/api/TransInTry", "try", "2", 20000, "tcc-3", "02").status == 409);

  CHECK(w.a.Account("1") == AccountState{10000, 0});
  CHECK(w.b.Account("2") == AccountState{10000, 0});
  CHECK(w.b.Rows("pending_credit") == 0);
  w.CheckConserved();
}

TEST_CASE("a saga transfer moves the money from one bank to the other", "[bank][saga][transfer]") {
  TwoBanks w;
  CHECK(w.a.Saga("/api/TransOut", "action", "1", 700, "saga-1", "01").status == 200);
  CHECK(w.b.Saga("/api/TransIn", "action", "2", 700, "saga-1", "02").status == 200);
  CHECK(w.b.Saga("/api/TransIn", "action", "2", 700, "saga-1", "02").status == 200);  // retried

  CHECK(w.a.Account("1") == AccountState{9300, 0});
  CHECK(w.b.Account("2") == AccountState{10700, 0});
  w.CheckConserved();
}

TEST_CASE("a saga whose TransIn fails is compensated in reverse order", "[bank][saga][transfer]") {
  TwoBanks w;
  CHECK(w.a.Saga("/api/TransOut", "action", "1", 700, "saga-2", "01").status == 200);
  CHECK(w.b.Saga("/api/TransIn", "action", "99", 700, "saga-2", "02").status == 409);
  // Every started action is compensated, the failed one included.
  CHECK(w.b.Saga("/api/TransInCompensate", "compensate", "99", 700, "saga-2", "02").status == 200);
  CHECK(w.a.Saga("/api/TransOutCompensate", "compensate", "1", 700, "saga-2", "01").status == 200);

  CHECK(w.a.Account("1") == AccountState{10000, 0});
  CHECK(w.b.Account("2") == AccountState{10000, 0});
  w.CheckConserved();
}

TEST_CASE("many transfers between the two banks conserve the money", "[bank][transfer]") {
  TwoBanks w;
  for (int i = 1; i <= 20; ++i) {
    const std::string gid = "t" + std::to_string(i);
    const std::string from = std::to_string(i % 10 + 1);
    const std::string to = std::to_string((i * 3) % 10 + 1);
    RunningBank& payer = i % 2 == 0 ? w.a : w.b;
    RunningBank& payee = i % 2 == 0 ? w.b : w.a;
    if (i % 3 == 0) {
      CHECK(payer.Saga("/api/TransOut", "action", from, 100 * i, gid, "01").status == 200);
      CHECK(payee.Saga("/api/TransIn", "action", to, 100 * i, gid, "02").status == 200);
    } else {
      CHECK(payer.Tcc("/api/TransOutTry", "try", from, 100 * i, gid, "01").status == 200);
      CHECK(payee.Tcc("/api/TransInTry", "try", to, 100 * i, gid, "02").status == 200);
      CHECK(payer.Tcc("/api/TransOutConfirm", "confirm", from, 100 * i, gid, "01").status == 200);
      CHECK(payee.Tcc("/api/TransInConfirm", "confirm", to, 100 * i, gid, "02").status == 200);
    }
    w.CheckConserved();
  }
}

}  // namespace
}  // namespace settle::bank
