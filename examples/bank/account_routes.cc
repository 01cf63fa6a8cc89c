#include "account_routes.h"

#include <nlohmann/json.hpp>
#include <string>

#include "bank_db.h"

namespace settle::bank {
namespace {

constexpr std::string_view kAccountPrefix = "/api/accounts/";

nlohmann::json ToJson(const Account& account) {
  return {
      {"account_id", account.account_id}, {"balance", account.balance}, {"frozen", account.frozen}};
}

sdk::HttpReply Message(int status, const std::string& message) {
  return {status, nlohmann::json{{"message", message}}.dump(
                      -1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

// Runs `read` on a BankDb in a transaction of its own, so that it sees committed state only;
// the transaction is rolled back on return, since it changes nothing.
template <typename Read>
sdk::HttpReply ReadOnly(sdk::SqliteBarrierStore& store, Read read) {
  Result<std::unique_ptr<sdk::BarrierTransaction>> tx = store.Begin();
  if (!tx) return Message(503, tx.status().message());
  BankDb db(sdk::SqliteBarrierStore::Connection(**tx));
  return read(db);
}

}  // namespace

sdk::RouteHandler ListAccountsRoute(sdk::SqliteBarrierStore& store) {
  return [&store](const sdk::HttpRequest&) {
    return ReadOnly(store, [](BankDb& db) {
      Result<std::vector<Account>> accounts = db.List();
      if (!accounts) return Message(500, accounts.status().message());
      nlohmann::json list = nlohmann::json::array();
      std::int64_t total = 0;
      for (const Account& account : *accounts) {
        list.push_back(ToJson(account));
        if (__builtin_add_overflow(total, account.balance + account.frozen, &total)) {
          return Message(500, "total: overflows a 64-bit integer");
        }
      }
      return sdk::HttpReply{200, nlohmann::json{{"accounts", list}, {"total", total}}.dump()};
    });
  };
}

sdk::RouteHandler GetAccountRoute(sdk::SqliteBarrierStore& store) {
  return [&store](const sdk::HttpRequest& request) {
    const std::string id = request.path.substr(kAccountPrefix.size());
    return ReadOnly(store, [&id](BankDb& db) {
      Result<std::optional<Account>> account = db.Find(id);
      if (!account) return Message(500, account.status().message());
      if (!*account) return Message(404, "account " + id + " not found");
      return sdk::HttpReply{200, ToJson(**account).dump()};
    });
  };
}

}  // namespace settle::bank
