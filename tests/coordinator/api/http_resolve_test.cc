// Resolve and redirect over HTTP (docs/operations.md): POST /api/admin/resolve and
// /api/admin/redirect for admin tokens only, every member required and checked by name, the
// transaction going on at once, each audited. In-process settled, a real participant that
// moved, real sockets.
#include <catch2/catch.hpp>

#include <string>

#include "admin_world.h"
#include "eventually.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::AdminWorld;
using testing::JsonResponse;
using testing::ParticipantServer;
using testing::RetryHourly;
using testing::ScriptedAnswer;

TEST_CASE("a participant that moved: its saga is redirected and finishes at the new address",
          "[http][redirect]") {
  ParticipantServer old_host;
  old_host.SetDefault("/action", ScriptedAnswer{503, "gone"});
  ParticipantServer new_host;
  AdminWorld world(RetryHourly);
  const json saga = {
      {"gid", "order-1"},
      {"trans_type", "saga"},
      {"steps",
       {{{"action", old_host.Url("/action")}, {"compensate", old_host.Url("/compensate")}}}},
      {"payloads", {R"({"amount":30})"}}};
  REQUIRE(world.client.PostJson("/api/settle/submit", saga).status == 200);
  REQUIRE(old_host.WaitForCalls("/action", 1));

  const auto redirect = [&](json body) {
    return world.admin.PostJson("/api/admin/redirect", body);
  };
  const json good = {{"gid", "order-1"},
                     {"branch_id", "01"},
                     {"op", "action"},
                     {"url", new_host.Url("/v2/action")},
                     {"reason", "moved to the new cluster"}};
  for (const char* member : {"gid", "branch_id", "op", "url", "reason"}) {
    INFO(member);
    json missing = good;
    missing.erase(member);
    const JsonResponse refused = redirect(missing);
    CHECK(refused.status == 400);
    CHECK_THAT(refused.json["message"].get<std::string>(), Catch::StartsWith(member));
  }
  json bad = good;
  bad["url"] = new_host.Url("/v2/action?gid=order-2&op=confirm");
  CHECK(redirect(bad).status == 400);
  bad = good;
  bad["op"] = "try";
  CHECK(redirect(bad).status == 404);
  bad = good;
  bad["extra"] = 1;
  CHECK_THAT(redirect(bad).json["message"].get<std::string>(),
             Catch::StartsWith("extra: unknown member"));
  CHECK(world.reader.PostJson("/api/admin/redirect", good).status == 403);
  CHECK(world.client.PostJson("/api/admin/redirect", good).status == 403);

  const JsonResponse done = redirect(good);
  REQUIRE(done.status == 200);
  CHECK(done.json["url"] == new_host.Url("/v2/action"));
  REQUIRE(new_host.WaitForCalls("/v2/action", 1));
  CHECK(new_host.CallsTo("/v2/action")[0].body == R"({"amount":30})");
  REQUIRE(testing::Eventually([&] {
    return world.admin.Get("/api/settle/query?gid=order-1").json["transaction"]["status"] ==
           "succeed";
  }));
  CHECK(redirect(good).status == 409);  // done: nothing pending
  const json entry = world.admin.Get("/api/admin/audit?action=redirect").json["entries"][0];
  CHECK(entry["actor"] == "on-call");
  CHECK(entry["parameters"]["from"] == old_host.Url("/action"));
  CHECK(entry["parameters"]["to"] == new_host.Url("/v2/action"));
}

TEST_CASE("a confirm applied by hand is resolved over HTTP and the TCC succeeds",
          "[http][resolve]") {
  ParticipantServer bank;
  bank.SetDefault("/confirm", ScriptedAnswer{500, "ledger bug"});
  AdminWorld world(RetryHourly);
  REQUIRE(
      world.client.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
      200);
  REQUIRE(world.client
              .PostJson("/api/settle/registerBranch", {{"gid", "t1"},
                                                       {"trans_type", "tcc"},
                                                       {"branch_id", "01"},
                                                       {"data", "{}"},
                                                       {"confirm", bank.Url("/confirm")},
                                                       {"cancel", bank.Url("/cancel")}})
              .status == 200);
  REQUIRE(
      world.client.PostJson("/api/settle/submit", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
      200);
  REQUIRE(bank.WaitForCalls("/confirm", 1));

  json body = {{"gid", "t1"},
               {"branch_id", "01"},
               {"op", "confirm"},
               {"outcome", "failed"},
               {"reason", "applied by hand, OPS-12"}};
  JsonResponse r = world.admin.PostJson("/api/admin/resolve", body);
  CHECK(r.status == 400);
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::StartsWith("outcome: a confirm"));
  body["outcome"] = "maybe";
  CHECK(world.admin.PostJson("/api/admin/resolve", body).status == 400);
  body["outcome"] = "succeed";
  body["branch_id"] = "02";
  CHECK(world.admin.PostJson("/api/admin/resolve", body).status == 404);
  body["branch_id"] = "01";
  CHECK(world.reader.PostJson("/api/admin/resolve", body).status == 403);
  r = world.admin.PostJson("/api/admin/resolve", body);
  REQUIRE(r.status == 200);
  CHECK(r.json["outcome"] == "succeed");
  REQUIRE(testing::Eventually([&] {
    return world.admin.Get("/api/settle/query?gid=t1").json["transaction"]["status"] == "succeed";
  }));
  CHECK(bank.CountCalls("/confirm") == 1);
  CHECK(world.admin.PostJson("/api/admin/resolve", body).status == 409);
  CHECK(world.admin.Get("/api/admin/audit?action=resolve&gid=t1").json["entries"].size() == 1);
}

TEST_CASE("a message that gave up delivering is sent again over HTTP and delivered",
          "[http][resend]") {
  ParticipantServer receiver;
  receiver.Script("/notify", {ScriptedAnswer{503, "down"}});
  AdminWorld world(RetryHourly);
  const json msg = {{"gid", "note-1"},
                    {"trans_type", "msg"},
                    {"retry_limit", 1},
                    {"steps", {{{"action", receiver.Url("/notify")}}}},
                    {"payloads", {R"({"order":7})"}}};
  REQUIRE(world.client.PostJson("/api/settle/submit", msg).status == 200);
  REQUIRE(testing::Eventually([&] {
    return world.admin.Get("/api/settle/query?gid=note-1").json["transaction"]["status"] ==
           "failed";
  }));
  const json body = {{"gid", "note-1"}, {"reason", "receiver back, OPS-21"}};
  CHECK(world.reader.PostJson("/api/admin/resend", body).status == 403);
  CHECK(world.client.PostJson("/api/admin/resend", body).status == 403);
  CHECK(world.admin.PostJson("/api/admin/resend", {{"gid", "note-1"}}).status == 400);
  CHECK(world.admin.PostJson("/api/admin/resend", {{"gid", "nobody"}, {"reason", "x"}}).status ==
        404);
  const JsonResponse sent = world.admin.PostJson("/api/admin/resend", body);
  REQUIRE(sent.status == 200);
  CHECK(sent.json == json{{"gid", "note-1"}, {"status", "submitted"}});
  REQUIRE(testing::Eventually([&] {
    return world.admin.Get("/api/settle/query?gid=note-1").json["transaction"]["status"] ==
           "succeed";
  }));
  CHECK(receiver.CountCalls("/notify") == 2);
  const JsonResponse again = world.admin.PostJson("/api/admin/resend", body);
  CHECK(again.status == 409);
  CHECK(world.admin.Get("/api/admin/audit?action=resend").json["entries"].size() == 1);
}

}  // namespace
}  // namespace settle
