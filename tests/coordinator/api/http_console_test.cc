// The routes behind the admin console, through the real HTTP API of an in-process settled:
// GET / leading to the console, whoami telling the session's access and token name, the
// counts per status, and forceStop's reason, stored with the transaction and logged with the
// name of the token that asked.
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <catch2/catch.hpp>

#include <chrono>

#include <memory>
#include <string>

#include "eventually.h"
#include "in_process_settled.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ClientWith;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;

const std::string kReadToken = "console-read-token-aaaaaaaa";
const std::string kClientToken = "console-client-token-bbbbbbbb";
const std::string kAdminToken = "console-admin-token-cccccccc";

// As an operator writes the token file: the comment after a token names it.
void WithNamedTokens(app::ServerConfig& config) {
  REQUIRE(config.api.tokens
              .AddFromText("read " + kReadToken + "  # Prometheus\n" + "client " + kClientToken +
                           "\n" + "admin " + kAdminToken + "  # on-call\n")
              .ok());
}

std::string HeaderOf(const JsonResponse& r, const std::string& name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

// Collects what settled logs while it lives.
class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)),
        previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }

  std::string Text() const {
    std::string text;
    for (const std::string& line : sink_->last_formatted()) text += line;
    return text;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_CASE("GET / sends a browser to the admin console", "[http][console]") {
  InProcessSettled s(WithNamedTokens);
  JsonClient anonymous(s.port());
  const JsonResponse root = anonymous.Get("/");
  CHECK(root.status == 303);
  CHECK(HeaderOf(root, "Location") == "/admin");
}

TEST_CASE("whoami tells each token its access level and its name, never the token",
          "[http][console][auth]") {
  InProcessSettled s(WithNamedTokens);
  const JsonResponse reader = ClientWith(s.port(), kReadToken).Get("/api/admin/whoami");
  CHECK(reader.status == 200);
  CHECK(reader.json == json{{"access", "read"}, {"name", "Prometheus"}, {"authentication", true}});
  const JsonResponse client = ClientWith(s.port(), kClientToken).Get("/api/admin/whoami");
  CHECK(client.json["access"] == "client");
  CHECK(client.json["name"] == "client-token-1");
  const JsonResponse admin = ClientWith(s.port(), kAdminToken).Get("/api/admin/whoami");
  CHECK(admin.json["access"] == "admin");
  CHECK(admin.json["name"] == "on-call");
  CHECK_THAT(admin.body, !Catch::Contains(kAdminToken));
  CHECK(JsonClient(s.port()).Get("/api/admin/whoami").status == 401);
}

TEST_CASE("without tokens whoami answers admin access for an anonymous caller", "[http][console]") {
  InProcessSettled s;
  const JsonResponse me = s.client().Get("/api/admin/whoami");
  CHECK(me.json == json{{"access", "admin"}, {"name", "anonymous"}, {"authentication", false}});
}

TEST_CASE(
    "counts gives the unfinished transactions per status, zeros included, and those "
    "finished since settled started",
    "[http][console]") {
  InProcessSettled s(WithNamedTokens);
  JsonClient client = ClientWith(s.port(), kClientToken);
  for (const char* gid : {"t1", "t2", "t3"}) {
    REQUIRE(client.PostJson("/api/settle/prepare", {{"gid", gid}, {"trans_type", "tcc"}}).status ==
            200);
  }
  // Aborting a TCC without branches: its pass ends it failed, and the counters see it.
  REQUIRE(client.PostJson("/api/settle/abort", {{"gid", "t3"}, {"trans_type", "tcc"}}).status ==
          200);
  JsonClient reader = ClientWith(s.port(), kReadToken);
  JsonResponse counts;
  testing::Eventually(
      [&] {
        counts = reader.Get("/api/admin/counts");
        return counts.status != 200 || counts.json["finished_since_start"]["failed"] == 1;
      },
      std::chrono::seconds(15), std::chrono::milliseconds(10));
  CHECK(counts.status == 200);
  CHECK(counts.json == json{{"unfinished", {{"prepared", 2}, {"submitted", 0}, {"aborting", 0}}},
                            {"stuck", 0},
                            {"finished_since_start", {{"succeed", 0}, {"failed", 1}}}});
  CHECK(JsonClient(s.port()).Get("/api/admin/counts").status == 401);
}

TEST_CASE("forceStop stores its reason and who asked, and logs the token's name",
          "[http][console][operator]") {
  LogCapture log;
  InProcessSettled s(WithNamedTokens);
  JsonClient admin = ClientWith(s.port(), kAdminToken);
  REQUIRE(admin.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
          200);

  REQUIRE(admin
              .PostJson("/api/settle/forceStop",
                        {{"gid", "t1"}, {"reason", "refunded by hand, ticket OPS-12"}})
              .status == 200);
  const json tx = admin.Get("/api/settle/query?gid=t1").json["transaction"];
  CHECK(tx["status"] == "failed");
  CHECK(tx["rollback_reason"] ==
        "stopped by an operator (forceStop by on-call): refunded by hand, ticket OPS-12");
  CHECK_THAT(log.Text(), Catch::Contains("gid=t1 force-stopped by actor=on-call") &&
                             Catch::Contains("refunded by hand"));
  CHECK_THAT(log.Text(), !Catch::Contains(kAdminToken));
}

TEST_CASE("a forceStop reason over 1,024 bytes or not a string is a 400 naming reason",
          "[http][console][bad-input]") {
  InProcessSettled s(WithNamedTokens);
  JsonClient admin = ClientWith(s.port(), kAdminToken);
  REQUIRE(admin.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
          200);
  const JsonResponse too_long =
      admin.PostJson("/api/settle/forceStop", {{"gid", "t1"}, {"reason", std::string(1025, 'x')}});
  CHECK(too_long.status == 400);
  CHECK_THAT(too_long.json["message"].get<std::string>(), Catch::StartsWith("reason: "));
  const JsonResponse not_text =
      admin.PostJson("/api/settle/forceStop", {{"gid", "t1"}, {"reason", 7}});
  CHECK(not_text.status == 400);
  CHECK_THAT(not_text.json["message"].get<std::string>(), Catch::StartsWith("reason: "));
  CHECK(admin.Get("/api/settle/query?gid=t1").json["transaction"]["status"] == "prepared");
  // At the limit it is accepted.
  CHECK(admin.PostJson("/api/settle/forceStop", {{"gid", "t1"}, {"reason", std::string(1024, 'x')}})
            .status == 200);
}

}  // namespace
}  // namespace settle
