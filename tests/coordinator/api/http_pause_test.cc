// Pause and resume over HTTP (docs/operations.md, "Pause and resume"): POST /api/admin/pause
// and /api/admin/resume for admin tokens only, with a required reason; /query and /all show
// who paused a transaction and why, /all?paused=true lists the parked ones, and a paused saga
// calls nobody until it is resumed. In-process settled, a real participant, real sockets.
#include <catch2/catch.hpp>

#include <string>

#include "eventually.h"
#include "in_process_settled.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::ParticipantServer;
using testing::ScriptedAnswer;

const std::string kReadToken = "pause-read-token-aaaaaaaaaaaaa";
const std::string kClientToken = "pause-client-token-bbbbbbbbbbb";
const std::string kAdminToken = "pause-admin-token-ccccccccccccc";

JsonClient ClientWith(int port, const std::string& token) {
  JsonClient client(port);
  client.SetHeader("Authorization", "Bearer " + token);
  return client;
}

TEST_CASE("a paused saga calls nobody until an operator resumes it, and both are shown",
          "[http][pause]") {
  ParticipantServer bank;
  bank.Script("/action", {ScriptedAnswer{500, R"({"message":"ledger offline"})"}});
  InProcessSettled s([](app::ServerConfig& config) {
    REQUIRE(config.api.tokens
                .AddFromText("read " + kReadToken + "  # dashboard\n" + "client " + kClientToken +
                             "  # orders\n" + "admin " + kAdminToken + "  # on-call\n")
                .ok());
    // A failed call is retried only an hour later, or when an operator asks.
    config.coordinator.retry_interval = std::chrono::hours(1);
    config.retry.max_interval = std::chrono::hours(1);
  });
  JsonClient client = ClientWith(s.port(), kClientToken);
  JsonClient admin = ClientWith(s.port(), kAdminToken);
  JsonClient reader = ClientWith(s.port(), kReadToken);
  const json saga = {
      {"gid", "order-1"},
      {"trans_type", "saga"},
      {"steps", {{{"action", bank.Url("/action")}, {"compensate", bank.Url("/compensate")}}}},
      {"payloads", {R"({"amount":30})"}}};
  REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  REQUIRE(bank.WaitForCalls("/action", 1));
  const auto query = [&reader] {
    return reader.Get("/api/settle/query?gid=order-1").json["transaction"];
  };
  // Its failure stored: the next call is an hour away.
  REQUIRE(testing::Eventually([&reader] {
    const JsonResponse answer = reader.Get("/api/settle/query?gid=order-1");
    for (const json& b : answer.json["branches"]) {
      if (b["op"] == "action" && b["failures"] == 1) return true;
    }
    return false;
  }));

  const JsonResponse paused =
      admin.PostJson("/api/admin/pause", {{"gid", "order-1"}, {"reason", "ledger bug, OPS-9"}});
  REQUIRE(paused.status == 200);
  CHECK(paused.json == json{{"gid", "order-1"}, {"paused", true}});
  const json shown = query();
  CHECK(shown["status"] == "submitted");
  CHECK(shown["paused"]["by"] == "on-call");
  CHECK(shown["paused"]["reason"] == "ledger bug, OPS-9");
  CHECK_THAT(shown["paused"]["at"].get<std::string>(), Catch::EndsWith("Z"));
  // The parked list.
  const JsonResponse parked = reader.Get("/api/settle/all?paused=true");
  REQUIRE(parked.status == 200);
  REQUIRE(parked.json["transactions"].size() == 1);
  CHECK(parked.json["transactions"][0]["gid"] == "order-1");
  CHECK(parked.json["transactions"][0]["paused"]["by"] == "on-call");
  CHECK(reader.Get("/api/settle/all?paused=false").json["transactions"].empty());

  // The participant is back, but the saga is paused: Retry now calls nobody (it would finish
  // the saga, and the resume below would then be refused), a repeated submit is accepted.
  REQUIRE(admin.PostJson("/api/settle/resetNextCronTime", {{"gid", "order-1"}}).status == 200);
  REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  CHECK(query()["status"] == "submitted");
  CHECK(bank.CountCalls("/action") == 1);

  // Resume: the pending call goes out at once and the saga finishes.
  const JsonResponse resumed =
      admin.PostJson("/api/admin/resume", {{"gid", "order-1"}, {"reason", "fixed in 2.3.1"}});
  REQUIRE(resumed.status == 200);
  CHECK(resumed.json == json{{"gid", "order-1"}, {"paused", false}});
  REQUIRE(testing::Eventually([&] { return query()["status"] == "succeed"; }));
  CHECK(bank.CountCalls("/action") == 2);
  CHECK_FALSE(query().contains("paused"));

  const JsonResponse audit = reader.Get("/api/admin/audit?gid=order-1");
  REQUIRE(audit.json["entries"].size() == 3);
  CHECK(audit.json["entries"][0]["action"] == "resume");
  CHECK(audit.json["entries"][1]["action"] == "retry_now");
  CHECK(audit.json["entries"][2]["action"] == "pause");
  CHECK(reader.Get("/api/admin/audit?action=pause").json["entries"].size() == 1);
}

TEST_CASE("pause and resume refuse bad input by name and non-admin tokens with 403",
          "[http][pause]") {
  InProcessSettled s([](app::ServerConfig& config) {
    REQUIRE(config.api.tokens
                .AddFromText("read " + kReadToken + "\nclient " + kClientToken + "\nadmin " +
                             kAdminToken + "\n")
                .ok());
  });
  JsonClient client = ClientWith(s.port(), kClientToken);
  JsonClient admin = ClientWith(s.port(), kAdminToken);
  JsonClient reader = ClientWith(s.port(), kReadToken);
  REQUIRE(client.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
          200);

  const auto message = [](const JsonResponse& r) { return r.json["message"].get<std::string>(); };
  JsonResponse r = admin.PostJson("/api/admin/pause", {{"gid", "t1"}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("reason: required"));
  r = admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}, {"all", true}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("all: unknown member"));
  r = admin.PostJson("/api/admin/pause", {{"reason", "x"}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("gid"));
  r = admin.PostJson("/api/admin/pause", {{"gid", "a b"}, {"reason", "x"}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("gid: "));
  r = admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", std::string(5000, 'r')}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("reason: "));
  r = admin.Post("/api/admin/pause", "{\"gid\":\"t1\",");
  CHECK(r.status == 400);
  r = admin.PostJson("/api/admin/pause", {{"gid", "nobody"}, {"reason", "x"}});
  CHECK(r.status == 404);
  CHECK_THAT(message(r), Catch::Contains("nobody"));
  r = admin.PostJson("/api/admin/resume", {{"gid", "t1"}, {"reason", "x"}});
  CHECK(r.status == 409);
  CHECK_THAT(message(r), Catch::Contains("not paused"));
  CHECK(reader.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}}).status == 403);
  CHECK(client.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}}).status == 403);
  CHECK(reader.Get("/api/settle/all?paused=maybe").status == 400);
  CHECK_THAT(message(reader.Get("/api/settle/all?paused=maybe")), Catch::StartsWith("paused: "));

  REQUIRE(admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}}).status == 200);
  r = admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "y"}});
  CHECK(r.status == 409);
  CHECK_THAT(message(r), Catch::Contains("already paused"));
  CHECK(client.PostJson("/api/admin/resume", {{"gid", "t1"}, {"reason", "x"}}).status == 403);
  // Nothing refused was audited.
  CHECK(reader.Get("/api/admin/audit").json["entries"].size() == 1);
}

}  // namespace
}  // namespace settle
