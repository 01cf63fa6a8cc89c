// The notify example (examples/notify): "notify send" and an unreliable "notify receive"
// against a real settled on 127.0.0.1, whose alert webhook is the receiver's /alerts.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "example_process.h"
#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ChildProcess;
using testing::JsonClient;

std::string Url(int port) { return "http://127.0.0.1:" + std::to_string(port); }

// A receiver refusing the first two deliveries of each message, and settled alerting it.
struct Notifications {
  testing::TempDir dir;
  ChildProcess receiver{{NOTIFY_BINARY, "receive", "--port", "0", "--fail-first", "2"},
                        dir.File("receiver.log")};
  int receiver_port = testing::ListeningPort(receiver);
  testing::SettledProcess settled{dir.File("settle.db"),
                                  {"--retry-interval", "100ms", "--retry-max", "400ms",
                                   "--alert-webhook", Url(receiver_port) + "/alerts"},
                                  0,
                                  dir.File("settled.log")};

  // Runs "notify send" to `to` until it exits; returns its exit code and keeps its output.
  int Send(const std::string& gid, int retry_limit, std::string to = "") {
    if (to.empty()) to = Url(receiver_port) + "/api/notify";
    sender = std::make_unique<ChildProcess>(
        std::vector<std::string>{NOTIFY_BINARY, "send", "--coordinator",
                                 Url(settled.port()) + "/api/settle", "--to", to, "--text",
                                 "order 42 shipped", "--gid", gid, "--retry-limit",
                                 std::to_string(retry_limit), "--wait", "60"},
        dir.File("send.log"));
    const int status = sender->Wait(std::chrono::seconds(90));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  bool Printed(ChildProcess& process, const std::string& text) {
    return !process.WaitForLine(text, std::chrono::seconds(30)).empty();
  }
  json Received() { return JsonClient(receiver_port).Get("/api/received").json; }

  std::unique_ptr<ChildProcess> sender;
};

TEST_CASE("notify: a notification refused twice is delivered at the third delivery",
          "[examples][msg][process]") {
  Notifications n;
  REQUIRE(n.receiver_port > 0);
  CHECK(n.Send("n-ok", 5) == 0);
  CHECK(n.Printed(*n.sender, "notification n-ok: succeed"));
  CHECK(n.Printed(n.receiver, "delivery 1 of n-ok refused with 503"));
  CHECK(n.Printed(n.receiver, "delivery 2 of n-ok refused with 503"));
  CHECK(n.Printed(n.receiver, R"(notified by n-ok at delivery 3: {"text":"order 42 shipped"})"));
  const json received = n.Received();
  REQUIRE(received["notifications"].size() == 1);
  CHECK(received["notifications"][0]["deliveries"] == 3);
  CHECK(received["alerts"].empty());
}

TEST_CASE(
    "notify: after retry_limit deliveries the message gives up: failed with its reason, "
    "and the alert reaches the webhook",
    "[examples][msg][process]") {
  Notifications n;
  REQUIRE(n.receiver_port > 0);
  CHECK(n.Send("n-gone", 2) == 1);
  CHECK(n.Printed(*n.sender, "notification n-gone: failed: "));
  const auto q = JsonClient(n.settled.port()).Get("/api/settle/query?gid=n-gone");
  CHECK(q.json["transaction"]["status"] == "failed");
  CHECK_THAT(q.json["transaction"]["rollback_reason"].get<std::string>(),
             Catch::Contains("retry_limit 2"));
  CHECK(n.Printed(n.receiver, "alert transaction_gave_up gid=n-gone status=failed"));
  const json received = n.Received();
  CHECK(received["notifications"].empty());
  REQUIRE(received["alerts"].size() == 1);
  CHECK(received["alerts"][0]["event"] == "transaction_gave_up");
  CHECK(received["alerts"][0]["url"] == Url(n.receiver_port) + "/api/notify");
}

TEST_CASE("notify: a receiver that is down gets nothing, and the message gives up and alerts",
          "[examples][msg][process]") {
  Notifications n;
  REQUIRE(n.receiver_port > 0);
  // Port 1 on loopback: nothing listens there, every delivery is refused.
  CHECK(n.Send("n-down", 3, "http://127.0.0.1:1/api/notify") == 1);
  CHECK(n.Printed(*n.sender, "notification n-down: failed: "));
  CHECK(n.Printed(n.receiver, "alert transaction_gave_up gid=n-down"));
}

TEST_CASE("notify: send exits 2 when the coordinator cannot be reached",
          "[examples][msg][process]") {
  testing::TempDir dir;
  ChildProcess send({NOTIFY_BINARY, "send", "--coordinator", "http://127.0.0.1:1/api/settle",
                     "--to", "http://127.0.0.1:1/api/notify", "--text", "hello"},
                    dir.File("send.log"));
  const int status = send.Wait(std::chrono::seconds(30));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
}

}  // namespace
}  // namespace settle
