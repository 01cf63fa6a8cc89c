// The order-service example (examples/order-service): the real binary against a real settled
// on 127.0.0.1. POST /orders is idempotent by its Idempotency-Key: retries, concurrent
// duplicates and retries after kill -9 on either side of the commit create one order and run
// one saga.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
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
using testing::JsonResponse;
using Clock = std::chrono::steady_clock;

std::string Order(const std::string& item, int quantity) {
  return json{{"item", item}, {"quantity", quantity}}.dump();
}

bool HasHeader(const JsonResponse& r, std::string name) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  for (const auto& header : r.headers) {
    if (lower(header.first) == lower(name)) return true;
  }
  return false;
}

// settled and the order service, each a real process with its own database; the order
// service can be killed and restarted on its port and database.
struct Shop {
  Shop() : Shop(std::vector<std::string>{}) {}
  // `settled_flags` go to settled besides the quick retries.
  explicit Shop(std::vector<std::string> settled_flags)
      : settled(dir.File("settle.db"), WithQuickRetries(std::move(settled_flags)), 0,
                dir.File("settled.log")) {}
  static std::vector<std::string> WithQuickRetries(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--retry-interval", "100ms", "--retry-max", "400ms"});
    return flags;
  }

  testing::TempDir dir;
  testing::SettledProcess settled;
  JsonClient coordinator{settled.port()};
  std::unique_ptr<ChildProcess> service;
  int port = 0;  // 0 until the first start, then kept across restarts

  void Start(std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {
        ORDER_SERVICE_BINARY,
        "--port",
        std::to_string(port),
        "--db",
        dir.File("o.db"),
        "--coordinator",
        "http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle",
        "--stock",
        "100",
        "--claim-lease",
        "1"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    service.reset();
    service = std::make_unique<ChildProcess>(argv, dir.File("order-service.log"));
    port = testing::ListeningPort(*service);
    REQUIRE(port > 0);
  }

  JsonResponse Post(const std::string& key, const std::string& body) {
    JsonClient client(port);
    if (!key.empty()) client.SetHeader("Idempotency-Key", key);
    return client.Post("/orders", body);
  }
  // Posts until the answer is not the 409 of a key still claimed by an earlier request.
  JsonResponse PostUntilClaimFree(const std::string& key, const std::string& body) {
    JsonResponse r;
    testing::Eventually(
        [&] {
          r = Post(key, body);
          return r.status != 409;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(50));
    return r;
  }
  json Orders() {
    const auto r = JsonClient(port).Get("/orders");
    REQUIRE(r.status == 200);
    return r.json["orders"];
  }
  std::int64_t Stock(const std::string& item) {
    const auto r = JsonClient(port).Get("/stock/" + item);
    REQUIRE(r.status == 200);
    return r.json["quantity"];
  }
  json Payments() {
    const auto r = JsonClient(port).Get("/payments");
    REQUIRE(r.status == 200);
    return r.json["payments"];
  }
  std::string WaitForEnd(const std::string& gid) {
    return testing::WaitForFinalStatus(coordinator, gid, Clock::now() + std::chrono::seconds(30));
  }
  // The order's status once its saga's last step has settled it (not pending).
  std::string WaitForOrderSettled(const std::string& order_id) {
    std::string status;
    testing::Eventually(
        [&] {
          status = JsonClient(port).Get("/orders/" + order_id).json.value("status", "");
          return status != "pending";
        },
        std::chrono::seconds(30), std::chrono::milliseconds(20));
    return status;
  }
  // Waits for the order service to die by the crash hook's SIGKILL.
  void ExpectKilled() { testing::ExpectKilledBySigkill(*service); }
};

TEST_CASE("order-service: an order commits, and its saga completes it, takes stock and charges it",
          "[examples][idempotency][process]") {
  Shop shop;
  shop.Start();
  const auto created = shop.Post("k1", Order("tea", 4));
  REQUIRE(created.status == 201);
  CHECK(created.json["status"] == "pending");
  const std::string gid = created.json["gid"];
  const std::string order_id = created.json["order_id"];
  CHECK(gid.rfind("order-", 0) == 0);

  CHECK(shop.WaitForEnd(gid) == "succeed");
  CHECK(shop.WaitForOrderSettled(order_id) == "completed");
  const json orders = shop.Orders();
  REQUIRE(orders.size() == 1);
  CHECK(orders[0]["order_id"] == order_id);
  CHECK(orders[0]["gid"] == gid);
  CHECK(orders[0]["item"] == "tea");
  CHECK(orders[0]["quantity"] == 4);
  CHECK(orders[0]["amount"] == 100);  // 25 a unit
  CHECK(orders[0]["status"] == "completed");
  CHECK(JsonClient(shop.port).Get("/orders/" + order_id).json == orders[0]);
  CHECK(JsonClient(shop.port).Get("/orders/unknown").status == 404);
  CHECK(shop.Stock("tea") == 96);
  CHECK(shop.Stock("coffee") == 100);
  const json payments = shop.Payments();
  REQUIRE(payments.size() == 1);
  CHECK(payments[0]["gid"] == gid);
  CHECK(payments[0]["amount"] == 100);
  CHECK(payments[0]["status"] == "charged");
}

TEST_CASE("order-service: a retry with the same key answers the first 201 and starts nothing",
          "[examples][idempotency][process]") {
  Shop shop;
  shop.Start();
  const auto first = shop.Post("k1", Order("tea", 4));
  REQUIRE(first.status == 201);
  const std::string gid = first.json["gid"];
  CHECK(shop.WaitForEnd(gid) == "succeed");

  const auto again = shop.Post("k1", Order("tea", 4));
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  // A key quoted as a structured-field string is the same key.
  CHECK(shop.Post("\"k1\"", Order("tea", 4)).body == first.body);

  CHECK(shop.Orders().size() == 1);
  CHECK(shop.Stock("tea") == 96);
  CHECK(shop.Payments().size() == 1);
  CHECK(testing::StatusOf(shop.coordinator, gid) == "succeed");

  // Another key is another order, with its own saga.
  const auto other = shop.Post("k2", Order("tea", 1));
  REQUIRE(other.status == 201);
  CHECK(other.json["gid"] != gid);
  CHECK(shop.WaitForEnd(other.json["gid"]) == "succeed");
  CHECK(shop.Orders().size() == 2);
  CHECK(shop.Stock("tea") == 95);
}

TEST_CASE("order-service: concurrent duplicates create one order: the others get 409 or its 201",
          "[examples][idempotency][process]") {
  Shop shop;
  shop.Start();
  constexpr int kThreads = 16;
  std::vector<JsonResponse> answers(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { answers[i] = shop.Post("same-key", Order("tea", 3)); });
  }
  for (std::thread& t : threads) t.join();

  const json orders = shop.Orders();
  REQUIRE(orders.size() == 1);
  const std::string gid = orders[0]["gid"];
  int created = 0;
  int busy = 0;
  for (const JsonResponse& r : answers) {
    if (r.status == 201) {
      ++created;
      CHECK(r.json["gid"] == gid);
      CHECK(r.json["status"] == "pending");
    } else if (r.status == 409 && HasHeader(r, "Retry-After")) {
      ++busy;
    }
  }
  CHECK(created >= 1);
  CHECK(created + busy == kThreads);
  CHECK(shop.WaitForEnd(gid) == "succeed");
  const auto repeat = shop.Post("same-key", Order("tea", 3));
  CHECK(repeat.status == 201);
  CHECK(repeat.json["gid"] == gid);
  CHECK(shop.Orders().size() == 1);
  CHECK(shop.Stock("tea") == 97);
  CHECK(shop.Payments().size() == 1);
}

TEST_CASE("order-service: bad requests get 400 naming what is wrong, and a reused key 422",
          "[examples][idempotency][process]") {
  Shop shop;
  shop.Start();
  auto message = [&](const std::string& key, const std::string& body) {
    const auto r = shop.Post(key, body);
    CHECK(r.status == 400);
    return r.json.value("message", "");
  };
  CHECK_THAT(message("", Order("tea", 1)), Catch::Contains("Idempotency-Key"));
  CHECK_THAT(message("b1", "{not json"), Catch::StartsWith("body:"));
  CHECK_THAT(message("b2", "[1,2]"), Catch::StartsWith("body:"));
  CHECK(message("b3", R"({"quantity":1})") == "item: required");
  CHECK_THAT(message("b4", R"({"item":7,"quantity":1})"), Catch::StartsWith("item:"));
  CHECK(message("b5", Order("tea", 0)) == "quantity: must be an integer from 1 to 1000");
  CHECK(message("b6", Order("tea", 1001)) == "quantity: must be an integer from 1 to 1000");
  CHECK_THAT(message("b7", R"({"item":"tea","quantity":"2"})"), Catch::StartsWith("quantity:"));
  CHECK_THAT(message("b8", R"({"item":"tea","quantity":2.5})"), Catch::StartsWith("quantity:"));
  CHECK_THAT(message("b9", R"({"item":"tea"})"), Catch::StartsWith("quantity:"));
  // A refused request is an answer too: its key replays it.
  CHECK(message("b5", Order("tea", 0)) == "quantity: must be an integer from 1 to 1000");

  REQUIRE(shop.Post("k1", Order("tea", 2)).status == 201);
  CHECK(shop.Post("k1", Order("tea", 3)).status == 422);
  CHECK(shop.Post("k1", Order("coffee", 2)).status == 422);
  CHECK(shop.Orders().size() == 1);
}

TEST_CASE("order-service: an order over the stock is cancelled by its saga's compensations",
          "[examples][idempotency][process]") {
  Shop shop;
  shop.Start();
  const auto created = shop.Post("big", Order("tea", 101));
  REQUIRE(created.status == 201);
  CHECK(shop.WaitForEnd(created.json["gid"]) == "failed");
  CHECK(shop.WaitForOrderSettled(created.json["order_id"]) == "cancelled");
  CHECK(shop.Stock("tea") == 100);
  CHECK(shop.Payments().empty());
  // Its retry replays the 201 and runs nothing again.
  CHECK(shop.Post("big", Order("tea", 101)).body == created.body);
  CHECK(shop.Orders().size() == 1);
}

TEST_CASE(
    "order-service: kill -9 before the commit: a retry after restart creates the order and "
    "its saga once",
    "[examples][idempotency][process][crash]") {
  Shop shop;
  shop.Start({"--crash-before-commit"});
  CHECK(shop.Post("k1", Order("tea", 5)).status == 0);  // no answer: the process died
  shop.ExpectKilled();
  CHECK_FALSE(
      shop.service->WaitForLine("crashing before the commit", std::chrono::seconds(10)).empty());

  shop.Start();
  CHECK(shop.Orders().empty());  // nothing committed
  // Retries get 409 while the dead request's claim holds (--claim-lease 1), then run.
  const auto created = shop.PostUntilClaimFree("k1", Order("tea", 5));
  REQUIRE(created.status == 201);
  const std::string gid = created.json["gid"];
  CHECK(shop.WaitForEnd(gid) == "succeed");
  CHECK(shop.WaitForOrderSettled(created.json["order_id"]) == "completed");
  CHECK(shop.Post("k1", Order("tea", 5)).body == created.body);
  CHECK(shop.Orders().size() == 1);
  CHECK(shop.Stock("tea") == 95);
  CHECK(shop.Payments().size() == 1);
}

TEST_CASE(
    "order-service: kill -9 after the commit: the restart submits the saga, and a retry gets "
    "the stored 201",
    "[examples][idempotency][process][crash]") {
  Shop shop;
  shop.Start({"--crash-after-commit"});
  CHECK(shop.Post("k1", Order("tea", 5)).status == 0);
  shop.ExpectKilled();
  CHECK_FALSE(
      shop.service->WaitForLine("crashing before the answer", std::chrono::seconds(10)).empty());

  shop.Start();  // its startup sweep finds the order whose saga was never submitted
  const json orders = shop.Orders();
  REQUIRE(orders.size() == 1);
  const std::string gid = orders[0]["gid"];
  CHECK_FALSE(
      shop.service->WaitForLine("saga " + gid + " submitted", std::chrono::seconds(10)).empty());
  CHECK(shop.WaitForEnd(gid) == "succeed");

  const auto retried = shop.Post("k1", Order("tea", 5));
  CHECK(retried.status == 201);
  CHECK(retried.json["gid"] == gid);
  CHECK(retried.json["order_id"] == orders[0]["order_id"]);
  CHECK(shop.WaitForOrderSettled(orders[0]["order_id"]) == "completed");
  CHECK(shop.Orders().size() == 1);
  CHECK(shop.Stock("tea") == 95);
  CHECK(shop.Payments().size() == 1);
}

TEST_CASE("order-service: with --coordinator-key its saga steps run only the calls settled signed",
          "[examples][process][signing]") {
  testing::TempDir keys;
  const std::string pem = keys.File("settled.pem");
  const std::string pub = keys.File("settled.pub");
  REQUIRE(std::system(("openssl genpkey -algorithm ed25519 -out '" + pem + "'").c_str()) == 0);
  REQUIRE(std::system(("openssl pkey -in '" + pem + "' -pubout -out '" + pub + "'").c_str()) == 0);
  Shop shop({"--signing-key", pem});
  shop.Start({"--coordinator-key", pub});

  const auto created = shop.Post("signed-1", Order("tea", 4));
  REQUIRE(created.status == 201);
  CHECK(shop.WaitForEnd(created.json["gid"]) == "succeed");
  CHECK(shop.WaitForOrderSettled(created.json["order_id"]) == "completed");
  CHECK(shop.Stock("tea") == 96);

  // Anyone else's call to a step is refused and takes nothing; the entry point is not a step.
  const auto forged = JsonClient(shop.port).Post(
      "/saga/inventory/reserve?gid=forged-1&trans_type=saga&branch_id=01&op=action",
      Order("tea", 50));
  CHECK(forged.status == 401);
  CHECK(shop.Stock("tea") == 96);
}

TEST_CASE("order-service: bad flags exit 2, and SIGTERM stops it with 0",
          "[examples][idempotency][process]") {
  testing::TempDir dir;
  auto exit_code = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), ORDER_SERVICE_BINARY);
    const int status = ChildProcess(argv, dir.File("bad.log")).Wait(std::chrono::seconds(30));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const std::vector<std::string> good = {
      "--port", "0", "--db", dir.File("o.db"), "--coordinator", "http://127.0.0.1:1/api/settle"};
  CHECK(exit_code({}) == 2);
  CHECK(exit_code({"--port", "70000", "--db", dir.File("o.db"), "--coordinator",
                   "http://127.0.0.1:1/api/settle"}) == 2);
  std::vector<std::string> both = good;
  both.insert(both.end(), {"--crash-before-commit", "--crash-after-commit"});
  CHECK(exit_code(both) == 2);
  CHECK(exit_code({"--help"}) == 0);

  std::vector<std::string> argv = good;
  argv.insert(argv.begin(), ORDER_SERVICE_BINARY);
  ChildProcess service(argv, dir.File("order-service.log"));
  REQUIRE(testing::ListeningPort(service) > 0);
  service.Signal(SIGTERM);
  const int status = service.Wait(std::chrono::seconds(30));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace settle
