#pragma once

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "eventually.h"
#include "fake_clock.h"
#include "msg_barrier_cases.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace settle::sdk::test {

// The MsgLedger of msg_barrier_cases.h in a fresh SQLite file.
class SqliteLedger final : public MsgLedger {
 public:
  SqliteLedger() {
    Result<std::unique_ptr<SqliteBarrierStore>> opened =
        SqliteBarrierStore::Open(dir_.File("ledger.db"));
    INFO(opened.status().ToString());
    REQUIRE(opened);
    store_ = std::move(opened).value();
    barrier_ = std::make_unique<Barrier>(*store_, clock_);
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(Exec(**tx, "CREATE TABLE ledger (gid TEXT NOT NULL, amount INTEGER NOT NULL)").ok());
    REQUIRE((*tx)->Commit().ok());
  }

  Barrier& barrier() override { return *barrier_; }

  Status Write(BarrierTransaction& tx, const std::string& gid, int amount) override {
    return Exec(WrappedBarrierStore::Unwrap(tx),
                "INSERT INTO ledger VALUES ('" + gid + "', " + std::to_string(amount) + ")");
  }

  int Rows(const std::string& gid) override {
    Result<std::unique_ptr<BarrierTransaction>> tx = store_->Begin();
    REQUIRE(tx);
    int rows = -1;
    const std::string sql = "SELECT count(*) FROM ledger WHERE gid = '" + gid + "'";
    REQUIRE(sqlite3_exec(
                SqliteBarrierStore::Connection(**tx), sql.c_str(),
                [](void* out, int, char** v, char**) {
                  *static_cast<int*>(out) = std::stoi(v[0]);
                  return 0;
                },
                &rows, nullptr) == SQLITE_OK);
    return rows;
  }

  // A transaction asks for the process's write turn before anything else, and waits there
  // while another one holds it.
  std::uint64_t WaitMark() override { return store_->WriteTurnsTaken(); }
  bool WaitUntilWaiting(std::uint64_t mark) override {
    return settle::testing::Eventually([&] { return store_->WriteTurnsTaken() > mark; },
                                       std::chrono::seconds(10), std::chrono::milliseconds(1));
  }

 private:
  static Status Exec(BarrierTransaction& tx, const std::string& sql) {
    sqlite3* db = SqliteBarrierStore::Connection(tx);
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      return Status::Unavailable(sqlite3_errmsg(db));
    }
    return Status::Ok();
  }

  settle::testing::TempDir dir_;
  settle::testing::FakeClock clock_;
  std::unique_ptr<SqliteBarrierStore> store_;
  std::unique_ptr<Barrier> barrier_;
};

}  // namespace settle::sdk::test
