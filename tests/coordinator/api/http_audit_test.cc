// The audit trail (docs/operations.md, "Audit trail"): every operator action (force stop,
// retry now, a host's retry now) stored with its actor, time, target and reason in the commit
// of the change it audits, listed by GET /api/admin/audit, shown with the transaction to
// operators, and sent to the alert webhook. In-process settled, real sockets.
#include <catch2/catch.hpp>

#include <string>

#include "admin_world.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::AdminWorld;
using testing::JsonResponse;
using testing::ParticipantServer;

TEST_CASE("each admin action is audited with its actor and reason, and only when it took effect",
          "[http][audit]") {
  ParticipantServer webhook;
  AdminWorld world(
      [&webhook](app::ServerConfig& config) { config.alert_webhook = webhook.Url("/alerts"); });
  for (const char* gid : {"order-1", "order-2"}) {
    REQUIRE(world.client
                .PostJson("/api/settle/prepare",
                          {{"gid", gid}, {"trans_type", "tcc"}, {"timeout_to_fail", 600}})
                .status == 200);
  }

  REQUIRE(world.admin
              .PostJson("/api/settle/resetNextCronTime",
                        {{"gid", "order-1"}, {"reason", "the bank is back"}})
              .status == 200);
  REQUIRE(world.admin
              .PostJson("/api/settle/forceStop",
                        {{"gid", "order-1"}, {"reason", "INC-7: refunded by hand"}})
              .status == 200);
  // Refused actions leave no entry: an unknown gid, a finished one, a read token.
  CHECK(world.admin.PostJson("/api/settle/resetNextCronTime", {{"gid", "nobody"}}).status != 200);
  CHECK(world.admin.PostJson("/api/settle/forceStop", {{"gid", "order-1"}}).status != 200);
  CHECK(world.reader.PostJson("/api/settle/forceStop", {{"gid", "order-2"}}).status == 403);

  const JsonResponse all = world.reader.Get("/api/admin/audit");
  REQUIRE(all.status == 200);
  REQUIRE(all.json["entries"].size() == 2);
  const json& stop = all.json["entries"][0];  // newest first
  CHECK(stop["action"] == "force_stop");
  CHECK(stop["gid"] == "order-1");
  CHECK(stop["actor"] == "on-call");
  CHECK(stop["reason"] == "INC-7: refunded by hand");
  CHECK_THAT(stop["at"].get<std::string>(), Catch::EndsWith("Z"));
  const json& retry = all.json["entries"][1];
  CHECK(retry["action"] == "retry_now");
  CHECK(retry["reason"] == "the bank is back");
  CHECK(retry["id"].get<std::int64_t>() < stop["id"].get<std::int64_t>());
  CHECK(all.json["next_position"] == "");

  // Filters and pages.
  CHECK(world.reader.Get("/api/admin/audit?action=retry_now").json["entries"].size() == 1);
  CHECK(world.reader.Get("/api/admin/audit?gid=order-2").json["entries"].empty());
  CHECK(world.reader.Get("/api/admin/audit?actor=dashboard").json["entries"].empty());
  const JsonResponse first = world.reader.Get("/api/admin/audit?limit=1");
  REQUIRE(first.json["entries"].size() == 1);
  const std::string next = first.json["next_position"].get<std::string>();
  REQUIRE_FALSE(next.empty());
  const JsonResponse second = world.reader.Get("/api/admin/audit?limit=1&position=" + next);
  CHECK(second.json["entries"][0]["action"] == "retry_now");
  for (const char* bad : {"action=delete", "limit=0", "limit=x", "position=-1", "gid=a%20b"}) {
    INFO(bad);
    const JsonResponse refused = world.reader.Get(std::string("/api/admin/audit?") + bad);
    CHECK(refused.status == 400);
    CHECK_THAT(refused.json["message"].get<std::string>(),
               Catch::StartsWith(std::string(bad).substr(0, std::string(bad).find('=')) + ": "));
  }
  CHECK(world.client.Get("/api/admin/audit").status == 403);

  // With the transaction: operators see it, the client whose transaction it is does not.
  const JsonResponse shown = world.reader.Get("/api/settle/query?gid=order-1");
  REQUIRE(shown.status == 200);
  REQUIRE(shown.json["transaction"]["audit"].size() == 2);
  CHECK(shown.json["transaction"]["audit"][0]["action"] == "force_stop");
  CHECK_FALSE(
      world.client.Get("/api/settle/query?gid=order-1").json["transaction"].contains("audit"));

  // The webhook hears of both, in order.
  REQUIRE(webhook.WaitForCalls("/alerts", 2));
  const auto alerts = webhook.CallsTo("/alerts");
  CHECK(json::parse(alerts[0].body)["event"] == "admin_action");
  CHECK(json::parse(alerts[0].body)["action"] == "retry_now");
  CHECK(json::parse(alerts[1].body)["action"] == "force_stop");
  CHECK(json::parse(alerts[1].body)["actor"] == "on-call");
  // The entry as stored, its time included.
  CHECK(json::parse(alerts[1].body)["at"] == stop["at"]);
  CHECK(json::parse(alerts[0].body)["at"] == retry["at"]);
}

}  // namespace
}  // namespace settle
