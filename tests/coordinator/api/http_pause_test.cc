// Pause and resume over HTTP (docs/operations.md, "Pause and resume"): POST /api/admin/pause
// and /api/admin/resume for admin tokens only, with a required reason; /query and /all show
// who paused a transaction and why, /all?paused=true lists the parked ones, and a paused saga
// calls nobody until it is resumed. In-process settled, a real participant, real sockets.
#include <catch2/catch.hpp>

#include <string>

#include "admin_world.h"
#include "eventually.h"
#include "in_process_settled.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::AdminWorld;
using testing::ClientWith;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::kAdminToken;
using testing::kClientToken;
using testing::ParticipantServer;
using testing::RetryHourly;
using testing::ScriptedAnswer;

TEST_CASE("a paused saga calls nobody until an operator resumes it, and both are shown",
          "[http][pause]") {
  ParticipantServer bank;
  bank.Script("/action", {ScriptedAnswer{500, R"({"message":"ledger offline"})"}});
  AdminWorld world(RetryHourly);
  const json saga = {
      {"gid", "order-1"},
      {"trans_type", "saga"},
      {"steps", {{{"action", bank.Url("/action")}, {"compensate", bank.Url("/compensate")}}}},
      {"payloads", {R"({"amount":30})"}}};
  REQUIRE(world.client.PostJson("/api/settle/submit", saga).status == 200);
  REQUIRE(bank.WaitForCalls("/action", 1));
  const auto query = [&world] {
    return world.reader.Get("/api/settle/query?gid=order-1").json["transaction"];
  };
  // Its failure stored: the next call is an hour away.
  REQUIRE(testing::Eventually([&world] {
    const JsonResponse answer = world.reader.Get("/api/settle/query?gid=order-1");
    for (const json& b : answer.json["branches"]) {
      if (b["op"] == "action" && b["failures"] == 1) return true;
    }
    return false;
  }));

  const JsonResponse paused = world.admin.PostJson(
      "/api/admin/pause", {{"gid", "order-1"}, {"reason", "ledger bug, OPS-9"}});
  REQUIRE(paused.status == 200);
  CHECK(paused.json == json{{"gid", "order-1"}, {"paused", true}});
  const json shown = query();
  CHECK(shown["status"] == "submitted");
  CHECK(shown["paused"]["by"] == "on-call");
  CHECK(shown["paused"]["reason"] == "ledger bug, OPS-9");
  CHECK_THAT(shown["paused"]["at"].get<std::string>(), Catch::EndsWith("Z"));
  // The parked list.
  const JsonResponse parked = world.reader.Get("/api/settle/all?paused=true");
  REQUIRE(parked.status == 200);
  REQUIRE(parked.json["transactions"].size() == 1);
  CHECK(parked.json["transactions"][0]["gid"] == "order-1");
  CHECK(parked.json["transactions"][0]["paused"]["by"] == "on-call");
  CHECK(world.reader.Get("/api/settle/all?paused=false").json["transactions"].empty());

  // The participant is back, but the saga is paused: Retry now calls nobody (it would finish
  // the saga, and the resume below would then be refused), a repeated submit is accepted.
  REQUIRE(world.admin.PostJson("/api/settle/resetNextCronTime", {{"gid", "order-1"}}).status ==
          200);
  REQUIRE(world.client.PostJson("/api/settle/submit", saga).status == 200);
  CHECK(query()["status"] == "submitted");
  CHECK(bank.CountCalls("/action") == 1);

  // Resume: the pending call goes out at once and the saga finishes.
  const JsonResponse resumed =
      world.admin.PostJson("/api/admin/resume", {{"gid", "order-1"}, {"reason", "fixed in 2.3.1"}});
  REQUIRE(resumed.status == 200);
  CHECK(resumed.json == json{{"gid", "order-1"}, {"paused", false}});
  REQUIRE(testing::Eventually([&] { return query()["status"] == "succeed"; }));
  CHECK(bank.CountCalls("/action") == 2);
  CHECK_FALSE(query().contains("paused"));

  const JsonResponse audit = world.reader.Get("/api/admin/audit?gid=order-1");
  REQUIRE(audit.json["entries"].size() == 3);
  CHECK(audit.json["entries"][0]["action"] == "resume");
  CHECK(audit.json["entries"][1]["action"] == "retry_now");
  CHECK(audit.json["entries"][2]["action"] == "pause");
  CHECK(world.reader.Get("/api/admin/audit?action=pause").json["entries"].size() == 1);
}

TEST_CASE("pause and resume refuse bad input by name and non-admin tokens with 403",
          "[http][pause]") {
  AdminWorld world;
  REQUIRE(
      world.client.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
      200);

  const auto message = [](const JsonResponse& r) { return r.json["message"].get<std::string>(); };
  JsonResponse r = world.admin.PostJson("/api/admin/pause", {{"gid", "t1"}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("reason: required"));
  r = world.admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}, {"all", true}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("all: unknown member"));
  r = world.admin.PostJson("/api/admin/pause", {{"reason", "x"}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("gid"));
  r = world.admin.PostJson("/api/admin/pause", {{"gid", "a b"}, {"reason", "x"}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("gid: "));
  r = world.admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", std::string(5000, 'r')}});
  CHECK(r.status == 400);
  CHECK_THAT(message(r), Catch::StartsWith("reason: "));
  r = world.admin.Post("/api/admin/pause", "{\"gid\":\"t1\",");
  CHECK(r.status == 400);
  r = world.admin.PostJson("/api/admin/pause", {{"gid", "nobody"}, {"reason", "x"}});
  CHECK(r.status == 404);
  CHECK_THAT(message(r), Catch::Contains("nobody"));
  r = world.admin.PostJson("/api/admin/resume", {{"gid", "t1"}, {"reason", "x"}});
  CHECK(r.status == 409);
  CHECK_THAT(message(r), Catch::Contains("not paused"));
  CHECK(world.reader.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}}).status == 403);
  CHECK(world.client.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}}).status == 403);
  CHECK(world.reader.Get("/api/settle/all?paused=maybe").status == 400);
  CHECK_THAT(message(world.reader.Get("/api/settle/all?paused=maybe")),
             Catch::StartsWith("paused: "));

  REQUIRE(world.admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "x"}}).status == 200);
  r = world.admin.PostJson("/api/admin/pause", {{"gid", "t1"}, {"reason", "y"}});
  CHECK(r.status == 409);
  CHECK_THAT(message(r), Catch::Contains("already paused"));
  CHECK(world.client.PostJson("/api/admin/resume", {{"gid", "t1"}, {"reason", "x"}}).status == 403);
  // Nothing refused was audited.
  CHECK(world.reader.Get("/api/admin/audit").json["entries"].size() == 1);
}

TEST_CASE("a saga whose custom_data says pause_after 2 is parked at its second failure and alerted",
          "[http][pause][policy]") {
  ParticipantServer bank;
  bank.SetDefault("/action", ScriptedAnswer{503, "ledger offline"});
  ParticipantServer webhook;
  InProcessSettled s([&webhook](app::ServerConfig& config) {
    config.coordinator.retry_interval = std::chrono::milliseconds(20);
    config.retry.max_interval = std::chrono::milliseconds(20);
    config.alert_webhook = webhook.Url("/alerts");
  });
  JsonClient client(s.port());
  const json saga = {
      {"gid", "order-1"},
      {"trans_type", "saga"},
      {"custom_data", R"({"pause_after":2})"},
      {"steps", {{{"action", bank.Url("/action")}, {"compensate", bank.Url("/compensate")}}}},
      {"payloads", {"{}"}}};
  REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  REQUIRE(webhook.WaitForCalls("/alerts", 1));
  const json alert = json::parse(webhook.CallsTo("/alerts")[0].body);
  CHECK(alert["event"] == "transaction_parked");
  CHECK(alert["gid"] == "order-1");
  CHECK(alert["failures"] == 2);
  CHECK_THAT(alert["reason"].get<std::string>(), Catch::Contains("failed 2 times in a row"));
  const json tx = client.Get("/api/settle/query?gid=order-1").json["transaction"];
  CHECK(tx["paused"]["by"] == "policy");
  CHECK(tx["options"]["pause_after"] == 2);
  CHECK(bank.CountCalls("/action") == 2);
  CHECK(client.Get("/api/settle/all?paused=true").json["transactions"].size() == 1);
}

TEST_CASE("a client parking many transactions gets few alerts, and another client's still go",
          "[http][pause][policy][alerts]") {
  ParticipantServer bank;
  bank.SetDefault("/action", ScriptedAnswer{503, "ledger offline"});
  ParticipantServer webhook;
  InProcessSettled s([&webhook](app::ServerConfig& config) {
    REQUIRE(config.api.tokens
                .AddFromText("client " + kClientToken + "  # shop\n" +
                             "client pause-client-token-ddddddddddd  # billing\n" + "admin " +
                             kAdminToken + "  # on-call\n")
                .ok());
    config.alert_webhook = webhook.Url("/alerts");
    config.alerts_per_creator = 3;
    // Every saga calls the bank and fails once: no circuit holds the later ones back.
    config.hosts.circuit.failures = 0;
  });
  JsonClient shop = ClientWith(s.port(), kClientToken);
  JsonClient billing = ClientWith(s.port(), "pause-client-token-ddddddddddd");
  JsonClient admin = ClientWith(s.port(), kAdminToken);
  const auto parked_saga = [&bank](const std::string& gid) {
    return json{{"gid", gid},
                {"trans_type", "saga"},
                {"custom_data", R"({"pause_after":1})"},
                {"steps", {{{"action", bank.Url("/action")}}}},
                {"payloads", {"{}"}}};
  };
  for (int i = 0; i < 10; ++i) {
    REQUIRE(shop.PostJson("/api/settle/submit", parked_saga("shop-" + std::to_string(i))).status ==
            200);
  }
  REQUIRE(billing.PostJson("/api/settle/submit", parked_saga("billing-1")).status == 200);
  REQUIRE(testing::Eventually([&admin] {
    return admin.Get("/api/settle/all?paused=true").json["transactions"].size() == 11;
  }));
  // An operator's action is alerted after everything queued before it: once it has arrived,
  // every parked alert that was to be sent has been.
  REQUIRE(
      admin.PostJson("/api/admin/resume", {{"gid", "billing-1"}, {"reason", "retry it"}}).status ==
      200);
  REQUIRE(testing::Eventually([&webhook] {
    for (const auto& call : webhook.CallsTo("/alerts")) {
      if (json::parse(call.body)["event"] == "admin_action") return true;
    }
    return false;
  }));
  int shop_alerts = 0;
  int billing_alerts = 0;
  // Those sent before the operator's: billing-1, resumed, fails and is parked again after it.
  for (const auto& call : webhook.CallsTo("/alerts")) {
    const json alert = json::parse(call.body);
    if (alert["event"] == "admin_action") break;
    if (alert["event"] != "transaction_parked") continue;
    const std::string gid = alert["gid"];
    (gid.starts_with("shop-") ? shop_alerts : billing_alerts) += 1;
  }
  CHECK(shop_alerts == 3);
  CHECK(billing_alerts == 1);
}

TEST_CASE("custom_data's pause_after is refused by name unless it is a count, for every type",
          "[http][pause][policy]") {
  InProcessSettled s;
  JsonClient client(s.port());
  const auto saga = [](const std::string& gid, const std::string& custom_data) {
    return json{{"gid", gid},
                {"trans_type", "saga"},
                {"custom_data", custom_data},
                {"steps", {{{"action", "http://127.0.0.1:9/a"}}}},
                {"payloads", {"{}"}}};
  };
  for (const char* bad : {R"({"pause_after":-1})", R"({"pause_after":"3"})",
                          R"({"pause_after":1.5})", R"({"pause_after":1000001})"}) {
    INFO(bad);
    const JsonResponse refused = client.PostJson("/api/settle/submit", saga("bad", bad));
    CHECK(refused.status == 400);
    CHECK_THAT(refused.json["message"].get<std::string>(),
               Catch::StartsWith("custom_data.pause_after: must be a whole number"));
    const JsonResponse tcc = client.PostJson(
        "/api/settle/prepare", {{"gid", "bad-tcc"}, {"trans_type", "tcc"}, {"custom_data", bad}});
    CHECK(tcc.status == 400);
    const JsonResponse msg =
        client.PostJson("/api/settle/prepare", {{"gid", "bad-msg"},
                                                {"trans_type", "msg"},
                                                {"custom_data", bad},
                                                {"steps", {{{"action", "http://127.0.0.1:9/a"}}}},
                                                {"payloads", {"{}"}}});
    CHECK(msg.status == 400);
  }
  CHECK(client.Get("/api/settle/query?gid=bad").json["transaction"].is_null());
  // A TCC's custom_data that is not JSON means nothing to settle, as to DTM: kept as it is.
  REQUIRE(client
              .PostJson("/api/settle/prepare",
                        {{"gid", "free"}, {"trans_type", "tcc"}, {"custom_data", "order #7"}})
              .status == 200);
  const json free = client.Get("/api/settle/query?gid=free").json["transaction"]["options"];
  CHECK(free["custom_data"] == "order #7");
  CHECK_FALSE(free.contains("pause_after"));
  REQUIRE(
      client
          .PostJson("/api/settle/prepare",
                    {{"gid", "own"}, {"trans_type", "xa"}, {"custom_data", R"({"pause_after":0})"}})
          .status == 200);
  CHECK(client.Get("/api/settle/query?gid=own").json["transaction"]["options"]["pause_after"] == 0);
}

}  // namespace
}  // namespace settle
