#include "loyalty_service.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "sqlite_statement.h"

namespace settle::order_msg {
namespace {

using nlohmann::json;

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS points (customer TEXT PRIMARY KEY, points INTEGER NOT NULL)";
constexpr std::string_view kCustomerPrefix = "/api/loyalty/customers/";

sdk::HttpReply Reply(int status, const json& body) {
  return {status, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

struct Credit {
  std::string customer;
  std::int64_t points = 0;
};

Result<Credit> ParseCredit(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("customer") || !j["customer"].is_string() ||
      !j.contains("points") || !j["points"].is_number_integer() || j["points"] < 0) {
    return Status::InvalidArgument(R"(the body must be {"customer":"...","points":N>=0})");
  }
  return Credit{j["customer"].get<std::string>(), j["points"].get<std::int64_t>()};
}

}  // namespace

Result<std::unique_ptr<LoyaltyService>> LoyaltyService::Open(LoyaltyServiceOptions options) {
  auto store = sdk::SqliteBarrierStore::Open(options.db_path);
  if (!store) return store.status();
  auto setup = (*store)->Begin();  // the points table lives beside the barrier table
  if (!setup) return setup.status();
  if (Status s = Run(sdk::SqliteBarrierStore::Connection(**setup), kSchema); !s.ok()) {
    return s;
  }
  if (Status s = (*setup)->Commit(); !s.ok()) return s;
  return std::unique_ptr<LoyaltyService>(new LoyaltyService(std::move(options), std::move(*store)));
}

LoyaltyService::LoyaltyService(LoyaltyServiceOptions options,
                               std::unique_ptr<sdk::SqliteBarrierStore> store)
    : options_(std::move(options)), store_(std::move(store)), barrier_(*store_, clock_) {}

LoyaltyService::~LoyaltyService() { Stop(); }

Result<int> LoyaltyService::Start(const std::string& host, int port) {
  participant_
      .OnAction("/api/loyalty/AddPoints",
                [this](const sdk::BranchRequest& r) { return AddPoints(r); })
      .OnGet(R"(/api/loyalty/customers/([^/]+))",
             [this](const sdk::HttpRequest& r) { return GetCustomer(r); });
  return participant_.Start(host, port);
}

void LoyaltyService::Stop() { participant_.Stop(); }

sdk::BranchReply LoyaltyService::AddPoints(const sdk::BranchRequest& request) {
  Result<Credit> credit = ParseCredit(request.body);
  if (!credit) return sdk::BranchReply::Error(credit.status());
  // The barrier runs the change at most once per message step, whatever settled redelivers.
  sdk::BarrierResult result = barrier_.Call(request, [&](sdk::BarrierTransaction& tx) {
    return Run(sdk::SqliteBarrierStore::Connection(tx),
               "INSERT INTO points VALUES (?1, ?2) "
               "ON CONFLICT (customer) DO UPDATE SET points = points + ?2",
               {credit->customer, credit->points});
  });
  const std::string what = "loyalty: +" + std::to_string(credit->points) + " points for " +
                           credit->customer + " (message " + request.gid + "): ";
  if (!result.reply.status.ok()) {
    std::printf("%s%s\n", what.c_str(), result.reply.status.ToString().c_str());
  } else if (result.seen == sdk::BarrierCase::kDuplicate) {
    std::printf("%sa redelivery, skipped by the barrier\n", what.c_str());
  } else if (options_.lose_first_answer) {
    std::printf("%sapplied; answering 503 as if the answer were lost (--lose-first-answer)\n",
                what.c_str());
    result.reply = sdk::BranchReply::Error(Status::Unavailable("the answer was lost (demo)"));
  } else {
    std::printf("%sapplied\n", what.c_str());
  }
  std::fflush(stdout);
  return result.reply;
}

sdk::HttpReply LoyaltyService::GetCustomer(const sdk::HttpRequest& request) {
  const std::string customer = request.path.substr(kCustomerPrefix.size());
  auto tx = store_->Begin();  // read only: rolled back on return
  if (!tx) return Reply(503, {{"message", tx.status().message()}});
  auto row = QueryRow(sdk::SqliteBarrierStore::Connection(**tx),
                      "SELECT points FROM points WHERE customer = ?1", {customer});
  if (!row) return Reply(503, {{"message", row.status().message()}});
  const std::int64_t points = *row ? std::stoll((**row)[0]) : 0;
  return Reply(200, {{"customer", customer}, {"points", points}});
}

}  // namespace settle::order_msg
