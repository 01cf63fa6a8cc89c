// Calls racing on one bank: the barrier and SQLite's write lock keep every reservation exact.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "bank_fixture.h"
#include "temp_dir.h"

namespace settle::bank {
namespace {

// Runs `call(i)` on `n` threads at once, each with its own client; counts the 200s and 409s.
template <typename Call>
std::pair<int, int> Race(int port, int n, Call call) {
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      settle::testing::JsonClient client(port);
      const int status = call(client, i).status;
      if (status == 200) ++ok;
      if (status == 409) ++refused;
    });
  }
  for (auto& t : threads) t.join();
  return {ok.load(), refused.load()};
}

TEST_CASE("racing Trys on one account never reserve more than its balance", "[bank][race]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  const auto [ok, refused] = Race(bank.port(), 24, [](auto& client, int i) {
    return client.Post(
        "/api/TransOutTry" + BranchQuery("g" + std::to_string(i), "tcc", "01", "try"),
        TransferBody("1", 1000));
  });
  CHECK(ok == 10);
  CHECK(refused == 14);
  CHECK(bank.Account("1") == AccountState{0, 10000});
  CHECK(bank.Total() == 100000);
}

TEST_CASE("the same Try delivered many times at once reserves once", "[bank][race]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  const auto [ok, refused] = Race(bank.port(), 12, [](auto& client, int) {
    return client.Post("/api/TransOutTry" + BranchQuery("g1", "tcc", "01", "try"),
                       TransferBody("1", 1000));
  });
  CHECK(ok == 12);
  CHECK(refused == 0);
  CHECK(bank.Account("1") == AccountState{9000, 1000});
}

TEST_CASE("a Try racing its Cancel leaves nothing reserved", "[bank][race]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  for (int round = 0; round < 10; ++round) {
    const std::string gid = "g" + std::to_string(round);
    Race(bank.port(), 2, [&](auto& client, int i) {
      const std::string op = i == 0 ? "try" : "cancel";
      const std::string path = i == 0 ? "/api/TransOutTry" : "/api/TransOutCancel";
      return client.Post(path + BranchQuery(gid, "tcc", "01", op), TransferBody("1", 100));
    });
    // Whichever came first, the Cancel has run: nothing may stay frozen.
    CHECK(bank.Account("1") == AccountState{10000, 0});
  }
}

}  // namespace
}  // namespace settle::bank
