#include "bank_fixture.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>

namespace settle::bank {

std::string BranchQuery(const std::string& gid, const std::string& trans_type,
                        const std::string& branch_id, const std::string& op) {
  return "?gid=" + gid + "&trans_type=" + trans_type + "&branch_id=" + branch_id + "&op=" + op;
}

std::string TransferBody(const std::string& account_id, std::int64_t amount) {
  return nlohmann::json{{"account_id", account_id}, {"amount", amount}}.dump();
}

RunningBank::RunningBank(std::string db_path, int accounts, std::int64_t initial_balance)
    : db_path_(std::move(db_path)) {
  auto service = BankService::Open({db_path_, accounts, initial_balance});
  REQUIRE(service);
  service_ = std::move(*service);
  auto port = service_->Start("127.0.0.1", 0);
  REQUIRE(port);
  port_ = *port;
  client_ = std::make_unique<settle::testing::JsonClient>(port_);
}

RunningBank::~RunningBank() { Stop(); }

void RunningBank::Stop() {
  client_.reset();
  service_.reset();
}

settle::testing::JsonResponse RunningBank::Post(const std::string& path_and_query,
                                                const std::string& body) {
  return client_->Post(path_and_query, body);
}

settle::testing::JsonResponse RunningBank::Get(const std::string& path) {
  return client_->Get(path);
}

settle::testing::JsonResponse RunningBank::Tcc(const std::string& path, const std::string& op,
                                               const std::string& account_id, std::int64_t amount,
                                               const std::string& gid,
                                               const std::string& branch_id) {
  return Post(path + BranchQuery(gid, "tcc", branch_id, op), TransferBody(account_id, amount));
}

settle::testing::JsonResponse RunningBank::Saga(const std::string& path, const std::string& op,
                                                const std::string& account_id, std::int64_t amount,
                                                const std::string& gid,
                                                const std::string& branch_id) {
  return Post(path + BranchQuery(gid, "saga", branch_id, op), TransferBody(account_id, amount));
}

AccountState RunningBank::Account(const std::string& account_id) {
  const auto r = Get("/api/accounts/" + account_id);
  REQUIRE(r.status == 200);
  REQUIRE(r.json["account_id"] == account_id);
  return {r.json["balance"].get<std::int64_t>(), r.json["frozen"].get<std::int64_t>()};
}

std::int64_t RunningBank::Total() {
  const auto r = Get("/api/accounts");
  REQUIRE(r.status == 200);
  return r.json["total"].get<std::int64_t>();
}

std::int64_t RunningBank::Rows(const std::string& table) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(db_path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(db, 10'000);
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "SELECT COUNT(*) FROM " + table;
  const int prepared = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  const int stepped = prepared == SQLITE_OK ? sqlite3_step(stmt) : prepared;
  const std::int64_t rows = stepped == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  REQUIRE(stepped == SQLITE_ROW);
  return rows;
}

void RunningBank::Execute(const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(db_path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(db, 10'000);
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace settle::bank
