// The order-msg example (examples/order-msg): the real order and loyalty services against a
// real settled on 127.0.0.1, including kill -9 of the order service on either side of its
// local commit.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "example_process.h"
#include "final_status.h"
#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ChildProcess;
using testing::JsonClient;
using testing::ListeningPort;

std::string Url(int port) { return "http://127.0.0.1:" + std::to_string(port); }

// settled, the loyalty service and the order service, each a real process with its own
// database; the order service can be killed and restarted on its port.
struct Shop {
  testing::TempDir dir;
  testing::SettledProcess settled{dir.File("settle.db"),
                                  {"--retry-interval", "100ms", "--retry-max", "400ms"},
                                  0,
                                  dir.File("settled.log")};
  JsonClient coordinator{settled.port()};
  std::unique_ptr<ChildProcess> loyalty;
  std::unique_ptr<ChildProcess> orders;
  int loyalty_port = 0;
  int orders_port = 0;  // 0 until the first start, then kept across restarts

  explicit Shop(std::vector<std::string> loyalty_flags = {}) {
    std::vector<std::string> argv = {ORDER_MSG_BINARY, "loyalty",       "--port", "0",
                                     "--db",           dir.File("l.db")};
    argv.insert(argv.end(), loyalty_flags.begin(), loyalty_flags.end());
    loyalty = std::make_unique<ChildProcess>(argv, dir.File("loyalty.log"));
    loyalty_port = ListeningPort(*loyalty);
    REQUIRE(loyalty_port > 0);
  }

  void StartOrders(const std::string& crash_flag = "") {
    std::vector<std::string> argv = {
        ORDER_MSG_BINARY, "orders",         "--port",        std::to_string(orders_port),
        "--db",           dir.File("o.db"), "--coordinator", Url(settled.port()) + "/api/settle",
        "--loyalty",      Url(loyalty_port)};
    if (!crash_flag.empty()) argv.push_back(crash_flag);
    orders.reset();
    orders = std::make_unique<ChildProcess>(argv, dir.File("orders.log"));
    orders_port = ListeningPort(*orders);
    REQUIRE(orders_port > 0);
  }

  testing::JsonResponse Place(const std::string& order_id, std::int64_t amount) {
    return JsonClient(orders_port)
        .PostJson("/api/orders",
                  {{"order_id", order_id}, {"customer", "alice"}, {"amount", amount}});
  }
  std::int64_t Points() {
    const auto r = JsonClient(loyalty_port).Get("/api/loyalty/customers/alice");
    REQUIRE(r.status == 200);
    return r.json["points"];
  }
  std::string WaitForEnd(const std::string& gid) {
    return testing::WaitForFinalStatus(coordinator, gid,
                                       std::chrono::steady_clock::now() + std::chrono::seconds(30));
  }
  // Waits for the order service to die by the crash hook's SIGKILL.
  void ExpectKilled() { testing::ExpectKilledBySigkill(*orders); }
};

TEST_CASE("order-msg: placing an order commits it and delivers its points once",
          "[examples][msg][process]") {
  Shop shop;
  shop.StartOrders();
  const auto placed = shop.Place("o1", 120);
  REQUIRE(placed.status == 200);
  CHECK(placed.json["gid"] == "order-o1");
  CHECK(placed.json["status"] == "submitted");
  CHECK(shop.WaitForEnd("order-o1") == "succeed");
  CHECK(shop.Points() == 12);
  CHECK_FALSE(shop.loyalty
                  ->WaitForLine("+12 points for alice (message order-o1): applied",
                                std::chrono::seconds(10))
                  .empty());
  const auto order = JsonClient(shop.orders_port).Get("/api/orders/o1");
  REQUIRE(order.status == 200);
  CHECK(order.json["amount"] == 120);

  // The same order again: the message exists, nothing runs twice.
  CHECK(shop.Place("o1", 120).status == 409);
  CHECK(shop.Place("o2", 55).status == 200);
  CHECK(shop.WaitForEnd("order-o2") == "succeed");
  CHECK(shop.Points() == 17);
  CHECK(shop.Place("o3", 0).status == 400);
  const auto listed = JsonClient(shop.orders_port).Get("/api/orders");
  REQUIRE(listed.status == 200);
  REQUIRE(listed.json["orders"].size() == 2);
  CHECK(listed.json["orders"][0]["order_id"] == "o1");
  CHECK(listed.json["orders"][1]["gid"] == "order-o2");
}

TEST_CASE("order-msg: a redelivered message adds its points once (the loyalty barrier)",
          "[examples][msg][process]") {
  Shop shop({"--lose-first-answer"});
  shop.StartOrders();
  REQUIRE(shop.Place("o1", 120).status == 200);
  CHECK(shop.WaitForEnd("order-o1") == "succeed");
  CHECK_FALSE(
      shop.loyalty
          ->WaitForLine("(message order-o1): applied; answering 503", std::chrono::seconds(10))
          .empty());
  CHECK_FALSE(
      shop.loyalty
          ->WaitForLine("(message order-o1): a redelivery, skipped", std::chrono::seconds(10))
          .empty());
  CHECK(shop.Points() == 12);
}

TEST_CASE(
    "order-msg: kill -9 after the local commit and before submit: the back-check "
    "delivers the points exactly once",
    "[examples][msg][process][crash]") {
  Shop shop;
  shop.StartOrders("--crash-after-commit");
  CHECK(shop.Place("o1", 120).status == 0);  // no answer: the process died
  shop.ExpectKilled();
  CHECK_FALSE(
      shop.orders->WaitForLine("committed; crashing before the submit", std::chrono::seconds(10))
          .empty());
  // settled never heard the submit: the message waits, and nothing is delivered.
  CHECK(testing::StatusOf(shop.coordinator, "order-o1") == "prepared");
  CHECK(shop.Points() == 0);

  shop.StartOrders();  // restarted on its port; settled's back-check finds the barrier row
  CHECK(shop.WaitForEnd("order-o1") == "succeed");
  CHECK(shop.Points() == 12);
  CHECK(JsonClient(shop.orders_port).Get("/api/orders/o1").status == 200);
  const auto q = shop.coordinator.Get("/api/settle/query?gid=order-o1");
  REQUIRE(q.json["branches"].is_array());
  for (const auto& branch : q.json["branches"]) CHECK(branch["status"] == "succeed");
}

TEST_CASE(
    "order-msg: kill -9 inside the local transaction: the back-check fails the message "
    "and no points are ever delivered",
    "[examples][msg][process][crash]") {
  Shop shop;
  shop.StartOrders("--crash-before-commit");
  CHECK(shop.Place("o1", 120).status == 0);
  shop.ExpectKilled();
  CHECK(testing::StatusOf(shop.coordinator, "order-o1") == "prepared");

  shop.StartOrders();
  CHECK(shop.WaitForEnd("order-o1") == "failed");
  const auto q = shop.coordinator.Get("/api/settle/query?gid=order-o1");
  CHECK_THAT(q.json["transaction"]["rollback_reason"].get<std::string>(),
             Catch::Contains("query_prepared: the local transaction did not commit"));
  CHECK(JsonClient(shop.orders_port).Get("/api/orders/o1").status == 404);
  // A late attempt at the same order is refused: the message failed for good.
  CHECK(shop.Place("o1", 120).status == 409);
  CHECK(shop.Points() == 0);
  CHECK(JsonClient(shop.orders_port).Get("/api/orders/o1").status == 404);
}

TEST_CASE("order-msg: bad flags exit 2, and SIGTERM stops a service with 0",
          "[examples][msg][process]") {
  testing::TempDir dir;
  auto exit_code = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), ORDER_MSG_BINARY);
    const int status = ChildProcess(argv, dir.File("bad.log")).Wait(std::chrono::seconds(30));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  CHECK(exit_code({}) == 2);
  CHECK(exit_code({"orders", "--port", "0", "--db", dir.File("o.db"), "--coordinator",
                   "http://127.0.0.1:1/api/settle", "--loyalty", "http://127.0.0.1:1",
                   "--crash-before-commit", "--crash-after-commit"}) == 2);
  CHECK(exit_code({"loyalty", "--port", "70000", "--db", dir.File("l.db")}) == 2);

  ChildProcess loyalty({ORDER_MSG_BINARY, "loyalty", "--port", "0", "--db", dir.File("l.db")},
                       dir.File("loyalty.log"));
  REQUIRE(ListeningPort(loyalty) > 0);
  loyalty.Signal(SIGTERM);
  const int status = loyalty.Wait(std::chrono::seconds(30));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace settle
