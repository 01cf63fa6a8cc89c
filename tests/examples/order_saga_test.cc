// The order saga example end to end: its three services in-process, the real settled, and
// the saga submitted through the example's own library.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "settle/sdk/client.h"
#include "settled_process.h"
#include "shop.h"
#include "temp_dir.h"

namespace settle::order_saga {
namespace {

std::unique_ptr<Shop> StartShop(const testing::TempDir& dir, CallLog& log, bool decline_cards) {
  ShopOptions options;
  options.data_dir = dir.path().string();
  options.decline_cards = decline_cards;
  auto shop = Shop::Start(options, log);
  REQUIRE(shop);
  return std::move(*shop);
}

// Declared so that settled stops before the shop: a participant's Stop() waits for the
// keep-alive connections the coordinator still holds.
struct World {
  explicit World(bool decline_cards = false) : shop(StartShop(dir, log, decline_cards)) {
    auto c =
        sdk::Client::Create("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
    REQUIRE(c);
    client = std::move(*c);
  }

  Order NewOrder(std::int64_t quantity) {
    auto gid = client->NewGid();
    REQUIRE(gid);
    return shop->NewOrder(*gid, quantity);
  }

  GlobalStatus CoordinatorStatus(const std::string& gid) {
    auto info = client->Query(gid);
    REQUIRE(info);
    REQUIRE(info->has_value());
    return (*info)->status;
  }

  // "service verb" of every call the services received, in order.
  std::vector<std::string> Calls() {
    std::vector<std::string> calls;
    for (const Call& call : log.calls()) calls.push_back(call.service + " " + call.verb);
    return calls;
  }

  testing::TempDir dir;
  CallLog log;
  std::unique_ptr<Shop> shop;
  testing::SettledProcess settled{dir.File("settle.db")};
  std::unique_ptr<sdk::Client> client;
};

TEST_CASE("an order saga succeeds: order created, stock taken, payment charged", "[order-saga]") {
  World w;
  const Order order = w.NewOrder(2);
  auto outcome = w.shop->PlaceOrder(*w.client, order);
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(w.CoordinatorStatus(order.order_id) == GlobalStatus::kSucceed);
  CHECK(w.Calls() ==
        std::vector<std::string>{"order create", "inventory reserve", "payment charge"});
  CHECK(*w.shop->orders().StatusOf(order.order_id) == "created");
  CHECK(*w.shop->inventory().Stock("widget") == 8);
  CHECK(*w.shop->payments().StatusOf(order.order_id) == "charged 50");
}

TEST_CASE("a declined card compensates payment, inventory and order, in that order",
          "[order-saga]") {
  World w(/*decline_cards=*/true);
  const Order order = w.NewOrder(2);
  auto outcome = w.shop->PlaceOrder(*w.client, order);
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK_THAT(outcome->reason, Catch::Contains("card declined"));
  CHECK(w.CoordinatorStatus(order.order_id) == GlobalStatus::kFailed);
  CHECK(w.Calls() == std::vector<std::string>{"order create", "inventory reserve", "payment charge",
                                              "payment refund", "inventory release",
                                              "order cancel"});
  const std::vector<Call> calls = w.log.calls();
  REQUIRE(calls.size() == 6);
  CHECK(calls[2].status.code() == StatusCode::kConflict);
  // The charge rolled back inside the barrier, so its refund has nothing to undo.
  CHECK(calls[3].seen == sdk::BarrierCase::kEmptyRollback);
  CHECK(calls[4].seen == sdk::BarrierCase::kFirstCall);
  CHECK(calls[5].seen == sdk::BarrierCase::kFirstCall);
  CHECK(*w.shop->orders().StatusOf(order.order_id) == "cancelled");
  CHECK(*w.shop->inventory().Stock("widget") == 10);
  CHECK(*w.shop->payments().StatusOf(order.order_id) == "none");
}

TEST_CASE("an order beyond the stock fails at inventory and never reaches payment",
          "[order-saga]") {
  World w;
  const Order order = w.NewOrder(11);
  auto outcome = w.shop->PlaceOrder(*w.client, order);
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK_THAT(outcome->reason, Catch::Contains("insufficient stock of widget"));
  CHECK(w.CoordinatorStatus(order.order_id) == GlobalStatus::kFailed);
  CHECK(w.Calls() == std::vector<std::string>{"order create", "inventory reserve",
                                              "inventory release", "order cancel"});
  const std::vector<Call> calls = w.log.calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[2].seen == sdk::BarrierCase::kEmptyRollback);
  CHECK(*w.shop->orders().StatusOf(order.order_id) == "cancelled");
  CHECK(*w.shop->inventory().Stock("widget") == 10);
  CHECK(*w.shop->payments().StatusOf(order.order_id) == "none");
}

TEST_CASE("the payment service refuses to charge an amount that is not positive", "[order-saga]") {
  World w;
  Order order = w.NewOrder(1);
  order.amount = 0;
  auto outcome = w.shop->PlaceOrder(*w.client, order);
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK_THAT(outcome->reason, Catch::Contains("amount must be positive"));
  CHECK(*w.shop->orders().StatusOf(order.order_id) == "cancelled");
  CHECK(*w.shop->inventory().Stock("widget") == 10);
}

}  // namespace
}  // namespace settle::order_saga
