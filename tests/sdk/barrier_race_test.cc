// Racing deliveries: a Try and its Cancel released at the same moment on two threads, and the
// same call delivered on several threads at once. Whatever the interleaving, the barrier must
// leave one consistent outcome: never money frozen for a cancelled branch, never a business
// change applied twice. Catch2 assertions run on the main thread only.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fake_clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using settle::testing::FakeClock;
using settle::testing::TempDir;

constexpr std::int64_t kOpeningBalance = 1'000'000;
constexpr int kRounds = 200;
// A bound on the whole loop for a slow machine; it limits the work, it asserts nothing.
constexpr auto kTimeBudget = std::chrono::seconds(60);

std::unique_ptr<SqliteBarrierStore> MustOpen(const std::string& path) {
  Result<std::unique_ptr<SqliteBarrierStore>> opened = SqliteBarrierStore::Open(path);
  INFO(opened.status().ToString());
  REQUIRE(opened);
  return std::move(opened).value();
}

Barrier::Business Sql(std::string sql) {
  return [sql](BarrierTransaction& tx) {
    sqlite3* db = SqliteBarrierStore::Connection(tx);
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      return Status::Unavailable(sqlite3_errmsg(db));
    }
    return Status::Ok();
  };
}

struct Account {
  std::int64_t balance = 0;
  std::int64_t frozen = 0;
  std::int64_t confirmed = 0;
  std::int64_t reservations = 0;
};

// Two stores on one file stand for two participant processes behind a load balancer.
struct Bank {
  Bank() {
    Result<std::unique_ptr<BarrierTransaction>> tx = store->Begin();
    REQUIRE(tx);
    REQUIRE(
        Sql("CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER, frozen INTEGER, "
            "confirmed INTEGER); CREATE TABLE reservation(gid TEXT PRIMARY KEY, amount INTEGER);"
            "INSERT INTO account VALUES (1, " +
            std::to_string(kOpeningBalance) + ", 0, 0)")(**tx)
            .ok());
    REQUIRE((*tx)->Commit().ok());
  }

  Account account() {
    Result<std::unique_ptr<BarrierTransaction>> tx = store->Begin();
    REQUIRE(tx);
    Account a;
    auto read = [](void* out, int, char** v, char**) {
      *static_cast<Account*>(out) = {std::stoll(v[0]), std::stoll(v[1]), std::stoll(v[2]),
                                     std::stoll(v[3])};
      return 0;
    };
    REQUIRE(
        sqlite3_exec(
            SqliteBarrierStore::Connection(**tx),
            "SELECT balance, frozen, confirmed, (SELECT count(*) FROM reservation) FROM account",
            read, &a, nullptr) == SQLITE_OK);
    return a;
  }

  TempDir dir;
  FakeClock clock;
  std::unique_ptr<SqliteBarrierStore> store = MustOpen(dir.File("bank.db"));
  std::unique_ptr<SqliteBarrierStore> other_process = MustOpen(dir.File("bank.db"));
  Barrier barrier{*store, clock};
  Barrier other_barrier{*other_process, clock};
};

BranchRequest Request(const std::string& gid, BranchOp op) {
  BranchRequest request;
  request.gid = gid;
  request.branch_id = "01";
  request.op = op;
  return request;
}

TEST_CASE("a try racing its cancel ends reserved-and-released or rejected, never stuck",
          "[barrier][race]") {
  Bank bank;
  // Each reservation is a row of its own: a cancel that ran before its Try would find none.
  auto reserve = [](const std::string& gid) {
    const std::string insert = "INSERT INTO reservation VALUES ('" + gid + "', 10);";
    return Sql(insert + "UPDATE account SET balance = balance - 10, frozen = frozen + 10");
  };
  auto release = [](const std::string& gid) -> Barrier::Business {
    return [gid](BarrierTransaction& tx) {
      Status s = Sql("DELETE FROM reservation WHERE gid = '" + gid + "'")(tx);
      if (!s.ok()) return s;
      if (sqlite3_changes(SqliteBarrierStore::Connection(tx)) != 1) {
        return Status::Internal("cancel found no reservation for " + gid);
      }
      return Sql("UPDATE account SET balance = balance + 10, frozen = frozen - 10")(tx);
    };
  };

  int both_ran = 0;      // try first: the cancel released what the try reserved
  int try_rejected = 0;  // cancel first: an empty rollback, and the late try hung
  int inconsistent = 0;
  const auto deadline = std::chrono::steady_clock::now() + kTimeBudget;
  int round = 0;
  for (; round < kRounds && std::chrono::steady_clock::now() < deadline; ++round) {
    const std::string gid = "race-" + std::to_string(round);
    // Odd rounds: the two calls come through two "processes" on the same file.
    Barrier& cancel_barrier = round % 2 == 0 ? bank.barrier : bank.other_barrier;
    BarrierResult try_result, cancel_result;
    std::latch start(2);
    std::thread try_thread([&] {
      start.arrive_and_wait();
      try_result = bank.barrier.Call(Request(gid, BranchOp::kTry), reserve(gid));
    });
    std::thread cancel_thread([&] {
      start.arrive_and_wait();
      cancel_result = cancel_barrier.Call(Request(gid, BranchOp::kCancel), release(gid));
    });
    try_thread.join();
    cancel_thread.join();

    INFO("round " << round << ": try " << ToString(try_result.seen) << " "
                  << try_result.reply.status.ToString() << ", cancel "
                  << ToString(cancel_result.seen) << " " << cancel_result.reply.status.ToString());
    REQUIRE(cancel_result.reply.status.ok());
    const Account account = bank.account();
    REQUIRE(account.balance == kOpeningBalance);
    REQUIRE(account.frozen == 0);
    REQUIRE(account.reservations == 0);
    if (try_result.seen == BarrierCase::kFirstCall && try_result.reply.status.ok() &&
        cancel_result.seen == BarrierCase::kFirstCall) {
      ++both_ran;
    } else if (cancel_result.seen == BarrierCase::kEmptyRollback &&
               try_result.seen == BarrierCase::kHanging &&
               try_result.reply.status.code() == StatusCode::kConflict) {
      ++try_rejected;
    } else {
      ++inconsistent;
    }
  }
  WARN(round << " rounds: " << both_ran << " try then cancel, " << try_rejected
             << " empty rollback then hanging try");
  CHECK(inconsistent == 0);
  CHECK(both_ran + try_rejected == round);
}

TEST_CASE("the same confirm delivered on several threads at once is applied exactly once",
          "[barrier][race]") {
  Bank bank;
  const Barrier::Business confirm = Sql("UPDATE account SET confirmed = confirmed + 1");
  constexpr int kThreads = 6;
  constexpr int kDeliveries = 50;
  int applied_total = 0;
  for (int round = 0; round < kDeliveries; ++round) {
    const std::string gid = "dup-" + std::to_string(round);
    std::vector<BarrierResult> results(kThreads);
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        Barrier& barrier = t % 2 == 0 ? bank.barrier : bank.other_barrier;
        results[t] = barrier.Call(Request(gid, BranchOp::kConfirm), confirm);
      });
    }
    for (std::thread& thread : threads) thread.join();

    int first = 0;
    int duplicates = 0;
    for (const BarrierResult& r : results) {
      INFO(ToString(r.seen) << " " << r.reply.status.ToString());
      CHECK(r.reply.status.ok());
      if (r.seen == BarrierCase::kFirstCall) ++first;
      if (r.seen == BarrierCase::kDuplicate) ++duplicates;
    }
    CHECK(first == 1);
    CHECK(duplicates == kThreads - 1);
    applied_total += first;
  }
  CHECK(bank.account().confirmed == kDeliveries);
  CHECK(applied_total == kDeliveries);
}

}  // namespace
}  // namespace settle::sdk
