#include "sdk_bank.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

namespace settle::testing {
namespace {

using sdk::BarrierTransaction;
using sdk::BranchRequest;

struct Transfer {
  std::string account;
  std::int64_t amount = 0;
};

Result<Transfer> ParseTransfer(const std::string& body) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("account_id") || !j["account_id"].is_string() ||
      !j.contains("amount") || !j["amount"].is_number_integer() || j["amount"] <= 0) {
    return Status::InvalidArgument("body: expected {\"account_id\":\"1\",\"amount\":N}");
  }
  return Transfer{j["account_id"].get<std::string>(), j["amount"].get<std::int64_t>()};
}

// Moves `balance_delta` into balance and `frozen_delta` into frozen of one account, refusing
// (Conflict) a change that would leave either negative or an unknown account.
Status Move(BarrierTransaction& tx, const Transfer& t, std::int64_t balance_delta,
            std::int64_t frozen_delta) {
  sqlite3* db = sdk::SqliteBarrierStore::Connection(tx);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "UPDATE account SET balance = balance + ?1, frozen = frozen + ?2 "
                     "WHERE id = ?3 AND balance + ?1 >= 0 AND frozen + ?2 >= 0",
                     -1, &stmt, nullptr);
  sqlite3_bind_int64(stmt, 1, balance_delta * t.amount);
  sqlite3_bind_int64(stmt, 2, frozen_delta * t.amount);
  sqlite3_bind_text(stmt, 3, t.account.c_str(), -1, SQLITE_TRANSIENT);
  const int rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return Status::Unavailable(sqlite3_errmsg(db));
  if (sqlite3_changes(db) == 0) {
    return Status::Conflict("account " + t.account + ": unknown or insufficient funds");
  }
  return Status::Ok();
}

// A guarded handler that applies Move(balance_delta, frozen_delta) to the body's account.
sdk::BranchHandler GuardedMove(sdk::Barrier& barrier, std::int64_t balance_delta,
                               std::int64_t frozen_delta) {
  return sdk::Guarded(barrier, [=](const BranchRequest& r, BarrierTransaction& tx) {
    auto transfer = ParseTransfer(r.body);
    if (!transfer) return transfer.status();
    if (balance_delta == 0 && frozen_delta == 0) return Status::Ok();
    return Move(tx, *transfer, balance_delta, frozen_delta);
  });
}

}  // namespace

SdkBank::SdkBank(const std::string& db_path, int accounts, std::int64_t balance,
                 sdk::ParticipantOptions options)
    : participant_(options), scheme_(options.tls_cert_file.empty() ? "http" : "https") {
  auto store = sdk::SqliteBarrierStore::Open(db_path);
  REQUIRE(store);
  store_ = std::move(*store);
  barrier_ = std::make_unique<sdk::Barrier>(*store_, clock_);
  auto tx = store_->Begin();
  REQUIRE(tx);
  sqlite3* db = sdk::SqliteBarrierStore::Connection(**tx);
  REQUIRE(sqlite3_exec(db,
                       "CREATE TABLE IF NOT EXISTS account (id TEXT PRIMARY KEY, "
                       "balance INTEGER NOT NULL, frozen INTEGER NOT NULL)",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  for (int i = 1; i <= accounts; ++i) {
    const std::string sql = "INSERT OR IGNORE INTO account VALUES ('" + std::to_string(i) + "', " +
                            std::to_string(balance) + ", 0)";
    REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  REQUIRE((*tx)->Commit().ok());

  sdk::Barrier& b = *barrier_;
  participant_.OnTry("/TransOutTry", GuardedMove(b, -1, +1))
      .OnConfirm("/TransOutConfirm", GuardedMove(b, 0, -1))
      .OnCancel("/TransOutCancel", GuardedMove(b, +1, -1))
      .OnTry("/TransInTry", GuardedMove(b, 0, 0))
      .OnConfirm("/TransInConfirm", GuardedMove(b, +1, 0))
      .OnCancel("/TransInCancel", GuardedMove(b, 0, 0))
      .OnAction("/TransOut", GuardedMove(b, -1, 0))
      .OnCompensate("/TransOutCompensate", GuardedMove(b, +1, 0))
      .OnAction("/TransIn", GuardedMove(b, +1, 0))
      .OnCompensate("/TransInCompensate", GuardedMove(b, -1, 0));
  auto port = participant_.Start("127.0.0.1", 0);
  REQUIRE(port);
  port_ = *port;
}

SdkBank::~SdkBank() { participant_.Stop(); }

sdk::BranchHandler SdkBank::Handler(std::int64_t balance_delta, std::int64_t frozen_delta) {
  return GuardedMove(*barrier_, balance_delta, frozen_delta);
}

std::string SdkBank::Url(const std::string& path) const {
  return scheme_ + "://127.0.0.1:" + std::to_string(port_) + path;
}

std::int64_t SdkBank::Read(const std::string& sql) {
  auto tx = store_->Begin();
  REQUIRE(tx);
  sqlite3* db = sdk::SqliteBarrierStore::Connection(**tx);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::int64_t value = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return value;
}

std::int64_t SdkBank::Balance(const std::string& account) {
  return Read("SELECT balance FROM account WHERE id = '" + account + "'");
}
std::int64_t SdkBank::Frozen(const std::string& account) {
  return Read("SELECT frozen FROM account WHERE id = '" + account + "'");
}
std::int64_t SdkBank::BarrierRows() { return Read("SELECT COUNT(*) FROM barrier"); }
std::int64_t SdkBank::Total() { return Read("SELECT SUM(balance + frozen) FROM account"); }

}  // namespace settle::testing
