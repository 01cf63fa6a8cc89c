// What SqliteBarrierStore promises: a barrier table in the participant's own file, rows that
// survive a reopen, transactions that roll back unless committed and that give business code
// their connection, and a bounded wait for the write lock.
#include "settle/sdk/sqlite_barrier_store.h"

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using settle::testing::TempDir;

const TimePoint kT0 = FromUnixMillis(1'800'000'000'000);

std::unique_ptr<SqliteBarrierStore> MustOpen(const std::string& path,
                                             SqliteBarrierOptions options = {}) {
  Result<std::unique_ptr<SqliteBarrierStore>> opened = SqliteBarrierStore::Open(path, options);
  INFO(opened.status().ToString());
  REQUIRE(opened);
  return std::move(opened).value();
}

std::unique_ptr<BarrierTransaction> MustBegin(BarrierStore& store) {
  Result<std::unique_ptr<BarrierTransaction>> tx = store.Begin();
  INFO(tx.status().ToString());
  REQUIRE(tx);
  return std::move(tx).value();
}

// Polls until `count` write transactions have asked the store for their turn; false after 10 s.
bool WaitForTurnsTaken(const SqliteBarrierStore& store, std::uint64_t count) {
  return settle::testing::Eventually([&] { return store.WriteTurnsTaken() >= count; },
                                     std::chrono::seconds(10), std::chrono::milliseconds(1));
}

BarrierRow Row(std::string gid, std::string reason = "try", TimePoint at = kT0) {
  return {"tcc", std::move(gid), "01", "try", "01", std::move(reason), at};
}

std::optional<std::string> ReasonOf(BarrierStore& store, const std::string& gid) {
  std::unique_ptr<BarrierTransaction> tx = MustBegin(store);
  Result<std::optional<std::string>> reason = tx->ReasonOf(gid, "01", "try", "01");
  REQUIRE(reason);
  return *reason;
}

// A plain connection to the same file, as another process (or a sqlite3 shell) would have.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    REQUIRE(sqlite3_open(path.c_str(), &db_) == SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    INFO(sql);
    REQUIRE(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  std::string Text(const std::string& sql) { return Text(db_, sql); }

  static std::string Text(sqlite3* db, const std::string& sql) {
    std::string out;
    auto first = [](void* out, int, char** values, char**) {
      *static_cast<std::string*>(out) = values[0] ? values[0] : "NULL";
      return 0;
    };
    INFO(sql);
    REQUIRE(sqlite3_exec(db, sql.c_str(), first, &out, nullptr) == SQLITE_OK);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST_CASE("Open creates the parent directories, the barrier table and a WAL file",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  const std::string path = dir.File("a/b/participant.db");
  MustOpen(path);
  CHECK(std::filesystem::exists(path));
  RawDb raw(path);
  CHECK(raw.Text("PRAGMA journal_mode") == "wal");
  CHECK(raw.Text("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'barrier'") ==
        "1");
  CHECK(raw.Text("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                 "name = 'barrier_create_time'") == "1");
}

TEST_CASE("Open leaves the participant's own user_version alone", "[sdk][sqlite_barrier]") {
  TempDir dir;
  const std::string path = dir.File("participant.db");
  RawDb(path).Exec("PRAGMA user_version = 7");
  MustOpen(path);
  MustOpen(path);
  CHECK(RawDb(path).Text("PRAGMA user_version") == "7");
}

TEST_CASE("Open refuses a file whose barrier table is not Settle's", "[sdk][sqlite_barrier]") {
  TempDir dir;
  const std::string path = dir.File("participant.db");
  RawDb(path).Exec("CREATE TABLE barrier(id INTEGER PRIMARY KEY, note TEXT)");
  Result<std::unique_ptr<SqliteBarrierStore>> opened = SqliteBarrierStore::Open(path);
  CHECK(opened.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(opened.status().message(), Catch::Contains("barrier"));
}

TEST_CASE("Open refuses an in-memory database, which each pooled connection would see apart",
          "[sdk][sqlite_barrier]") {
  CHECK(SqliteBarrierStore::Open(":memory:").status().code() == StatusCode::kInvalidArgument);
  CHECK(SqliteBarrierStore::Open("").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("InsertIfAbsent inserts a key once and keeps the first row's reason",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  auto store = MustOpen(dir.File("participant.db"));
  std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
  CHECK(tx->InsertIfAbsent(Row("g1", "cancel")).value());
  CHECK_FALSE(tx->InsertIfAbsent(Row("g1", "try")).value());
  CHECK(tx->ReasonOf("g1", "01", "try", "01").value() == "cancel");
  CHECK(tx->ReasonOf("g1", "01", "try", "02").value() == std::nullopt);
  CHECK(tx->ReasonOf("g2", "01", "try", "01").value() == std::nullopt);
  REQUIRE(tx->Commit().ok());

  std::unique_ptr<BarrierTransaction> later = MustBegin(*store);
  CHECK_FALSE(later->InsertIfAbsent(Row("g1", "try")).value());
  CHECK(later->InsertIfAbsent(Row("g2")).value());
}

TEST_CASE("committed rows survive closing and reopening the store", "[sdk][sqlite_barrier]") {
  TempDir dir;
  const std::string path = dir.File("participant.db");
  {
    auto store = MustOpen(path);
    std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
    REQUIRE(tx->InsertIfAbsent(Row("g1", "cancel")).value());
    REQUIRE(tx->Commit().ok());
  }
  auto reopened = MustOpen(path);
  CHECK(ReasonOf(*reopened, "g1") == "cancel");
}

TEST_CASE("a transaction that is not committed rolls back its rows and the business change",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  const std::string path = dir.File("participant.db");
  auto store = MustOpen(path);
  RawDb raw(path);
  raw.Exec("CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER)");
  raw.Exec("INSERT INTO account VALUES (1, 100)");

  auto change_both = [&](BarrierTransaction& tx) {
    REQUIRE(tx.InsertIfAbsent(Row("g1")).value());
    REQUIRE(sqlite3_exec(SqliteBarrierStore::Connection(tx),
                         "UPDATE account SET balance = 0 WHERE id = 1", nullptr, nullptr,
                         nullptr) == SQLITE_OK);
  };
  SECTION("destroyed without Commit") {
    std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
    change_both(*tx);
  }
  SECTION("explicitly rolled back") {
    std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
    change_both(*tx);
    tx->Rollback();
    CHECK(tx->InsertIfAbsent(Row("g2")).status().code() == StatusCode::kInternal);
    CHECK(tx->Commit().code() == StatusCode::kInternal);
  }
  SECTION("outliving its store") {
    std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
    change_both(*tx);
    store.reset();
    tx.reset();
    store = MustOpen(path);
  }
  CHECK(ReasonOf(*store, "g1") == std::nullopt);
  CHECK(raw.Text("SELECT balance FROM account") == "100");
}

TEST_CASE("business code runs its SQL inside the barrier transaction through Connection(tx)",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  auto store = MustOpen(dir.File("participant.db"));
  std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
  sqlite3* db = SqliteBarrierStore::Connection(*tx);
  REQUIRE(db != nullptr);
  CHECK(sqlite3_get_autocommit(db) == 0);  // the transaction is open on this very connection
  RawDb::Text(db,
              "INSERT INTO barrier VALUES ('tcc', 'g1', '01', 'try', '01', 'written by SQL', 0)");
  CHECK(tx->ReasonOf("g1", "01", "try", "01").value() == "written by SQL");
}

TEST_CASE("Connection of a transaction from another store is nullptr", "[sdk][sqlite_barrier]") {
  class ForeignTransaction final : public BarrierTransaction {
   public:
    Result<bool> InsertIfAbsent(const BarrierRow&) override { return true; }
    Result<std::optional<std::string>> ReasonOf(const std::string&, const std::string&,
                                                const std::string&, const std::string&) override {
      return std::optional<std::string>();
    }
    Status Commit() override { return Status::Ok(); }
    void Rollback() override {}
  };
  ForeignTransaction foreign;
  CHECK(SqliteBarrierStore::Connection(foreign) == nullptr);
}

TEST_CASE("Begin gives up with Unavailable when the write lock is held beyond busy_timeout",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  const std::string path = dir.File("participant.db");
  SqliteBarrierOptions options;
  options.busy_timeout_ms = 50;
  auto store = MustOpen(path, options);

  SECTION("by another process's connection") {
    RawDb other(path);
    other.Exec("BEGIN IMMEDIATE");
    Result<std::unique_ptr<BarrierTransaction>> blocked = store->Begin();
    CHECK(blocked.status().code() == StatusCode::kUnavailable);
    CHECK(store->DeleteCreatedBefore(kT0, 10).status().code() == StatusCode::kUnavailable);
    other.Exec("COMMIT");
  }
  SECTION("by another transaction of the same store") {
    std::unique_ptr<BarrierTransaction> holder = MustBegin(*store);
    Result<std::unique_ptr<BarrierTransaction>> blocked = store->Begin();
    CHECK(blocked.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(blocked.status().message(), Catch::Contains("locked"));
  }
  CHECK(store->Begin().ok());  // once the lock is free again
}

TEST_CASE("transactions of one store take their write turns in arrival order",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  auto store = MustOpen(dir.File("participant.db"));
  std::unique_ptr<BarrierTransaction> holder = MustBegin(*store);
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    // Catch's assertions are for the test's own thread: waiters only record.
    waiters.emplace_back([&, i] {
      Result<std::unique_ptr<BarrierTransaction>> tx = store->Begin();
      {
        std::lock_guard lock(mu);  // while holding the turn
        order.push_back(tx.ok() ? i : -1);
      }
      if (tx.ok() && !(*tx)->Commit().ok()) {
        std::lock_guard lock(mu);
        order.push_back(-2);
      }
    });
    // The next waiter arrives only once this one has asked for its turn.
    REQUIRE(WaitForTurnsTaken(*store, static_cast<std::uint64_t>(i) + 2));
  }
  CHECK(holder->Commit().ok());
  for (auto& t : waiters) t.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("a transaction that gave up waiting does not hold up the ones after it",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  SqliteBarrierOptions options;
  options.busy_timeout_ms = 100;
  auto store = MustOpen(dir.File("participant.db"), options);
  std::unique_ptr<BarrierTransaction> holder = MustBegin(*store);
  CHECK(store->Begin().status().code() == StatusCode::kUnavailable);  // gives up after 100 ms
  Result<std::unique_ptr<BarrierTransaction>> later = Status::Internal("not run");
  const std::uint64_t turns = store->WriteTurnsTaken();
  std::thread waiter([&] { later = store->Begin(); });
  REQUIRE(WaitForTurnsTaken(*store, turns + 1));  // waiting behind the holder
  CHECK(holder->Commit().ok());
  waiter.join();
  CHECK(later.ok());
}

TEST_CASE("an idle connection is reused by the next transaction", "[sdk][sqlite_barrier]") {
  TempDir dir;
  auto store = MustOpen(dir.File("participant.db"));
  sqlite3* first = nullptr;
  {
    std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
    first = SqliteBarrierStore::Connection(*tx);
  }
  std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
  CHECK(SqliteBarrierStore::Connection(*tx) == first);
}

TEST_CASE("DeleteCreatedBefore deletes at most `limit` rows created before the cutoff",
          "[sdk][sqlite_barrier]") {
  TempDir dir;
  auto store = MustOpen(dir.File("participant.db"));
  {
    std::unique_ptr<BarrierTransaction> tx = MustBegin(*store);
    for (int i = 0; i < 5; ++i) REQUIRE(tx->InsertIfAbsent(Row("old" + std::to_string(i))).value());
    REQUIRE(tx->InsertIfAbsent(Row("at-cutoff", "try", kT0 + Duration(10))).value());
    REQUIRE(tx->Commit().ok());
  }
  const TimePoint cutoff = kT0 + Duration(10);
  CHECK(store->DeleteCreatedBefore(cutoff, 3).value() == 3);
  CHECK(store->DeleteCreatedBefore(cutoff, 3).value() == 2);
  CHECK(store->DeleteCreatedBefore(cutoff, 3).value() == 0);
  CHECK(ReasonOf(*store, "at-cutoff") == "try");
}

}  // namespace
}  // namespace settle::sdk
