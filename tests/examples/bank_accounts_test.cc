// The bank's account reads, its options, and what a restart keeps.
#include <catch2/catch.hpp>

#include "bank_fixture.h"
#include "bank_service.h"
#include "temp_dir.h"

namespace settle::bank {
namespace {

TEST_CASE("a new bank has accounts 1..10 with 10000 each", "[bank][accounts]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  const auto r = bank.Get("/api/accounts");
  REQUIRE(r.status == 200);
  REQUIRE(r.json["accounts"].size() == 10);
  for (int i = 0; i < 10; ++i) {
    const auto& account = r.json["accounts"][i];
    CHECK(account["account_id"] == std::to_string(i + 1));
    CHECK(account["balance"] == 10000);
    CHECK(account["frozen"] == 0);
  }
  CHECK(r.json["total"] == 100000);
}

TEST_CASE("one account is read by its id", "[bank][accounts]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  const auto r = bank.Get("/api/accounts/7");
  REQUIRE(r.status == 200);
  CHECK(r.json == nlohmann::json{{"account_id", "7"}, {"balance", 10000}, {"frozen", 0}});
}

TEST_CASE("an unknown account is a 404 with a message", "[bank][accounts]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  for (const std::string id : {"11", "0", "abc"}) {
    const auto r = bank.Get("/api/accounts/" + id);
    CHECK(r.status == 404);
    REQUIRE(r.json.is_object());
    CHECK(r.json["message"].get<std::string>().find(id) != std::string::npos);
  }
}

TEST_CASE("the total counts frozen money but not pending credits", "[bank][accounts]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  REQUIRE(bank.Tcc("/api/TransOutTry", "try", "1", 300, "g1").status == 200);
  REQUIRE(bank.Tcc("/api/TransInTry", "try", "2", 50, "g2").status == 200);
  const auto r = bank.Get("/api/accounts");
  REQUIRE(r.status == 200);
  CHECK(r.json["accounts"][0] ==
        nlohmann::json{{"account_id", "1"}, {"balance", 9700}, {"frozen", 300}});
  CHECK(r.json["accounts"][1]["balance"] == 10000);
  CHECK(r.json["total"] == 100000);
}

TEST_CASE("the number of accounts and their initial balance are options", "[bank][accounts]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"), 3, 500);
  const auto r = bank.Get("/api/accounts");
  REQUIRE(r.status == 200);
  CHECK(r.json["accounts"].size() == 3);
  CHECK(r.json["total"] == 1500);
  CHECK(bank.Account("3") == AccountState{500, 0});
  CHECK(bank.Get("/api/accounts/4").status == 404);
}

TEST_CASE("options out of range are refused", "[bank][accounts]") {
  settle::testing::TempDir dir;
  CHECK(BankService::Open({dir.File("a.db"), 0, 10}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(BankService::Open({dir.File("b.db"), 10, -1}).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("a restart keeps the balances and does not create accounts again", "[bank][accounts]") {
  settle::testing::TempDir dir;
  const std::string db = dir.File("bank.db");
  {
    RunningBank bank(db);
    REQUIRE(bank.Saga("/api/TransOut", "action", "1", 100, "g1").status == 200);
    REQUIRE(bank.Tcc("/api/TransOutTry", "try", "2", 40, "g2").status == 200);
    REQUIRE(bank.Tcc("/api/TransInTry", "try", "3", 60, "g3").status == 200);
  }
  RunningBank bank(db, 20, 1);  // other options: they apply only to a new database
  const auto r = bank.Get("/api/accounts");
  REQUIRE(r.status == 200);
  CHECK(r.json["accounts"].size() == 10);
  CHECK(r.json["total"] == 99900);
  CHECK(bank.Account("1") == AccountState{9900, 0});
  CHECK(bank.Account("2") == AccountState{9960, 40});
  // The barrier and the pending credit survive too: the TCCs finish after the restart.
  CHECK(bank.Tcc("/api/TransOutTry", "try", "2", 40, "g2").status == 200);  // a duplicate
  CHECK(bank.Tcc("/api/TransOutConfirm", "confirm", "2", 40, "g2").status == 200);
  CHECK(bank.Tcc("/api/TransInConfirm", "confirm", "3", 60, "g3").status == 200);
  CHECK(bank.Account("2") == AccountState{9960, 0});
  CHECK(bank.Account("3") == AccountState{10060, 0});
}

}  // namespace
}  // namespace settle::bank
