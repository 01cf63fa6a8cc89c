// Transactional messages, topics and XA against a real settled process and real participants
// on 127.0.0.1, including kill -9 of settled after prepare, after submit and during delivery.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "final_status.h"
#include "json_client.h"
#include "participant_server.h"
#include "restartable_settled.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ScriptedAnswer;
using testing::SettledProcess;

const std::vector<std::string> kArgs = {"--retry-interval", "100ms", "--retry-max", "400ms",
                                        "--log-level",      "warn"};
const ScriptedAnswer kFailure{409, R"({"dtm_result":"FAILURE"})"};
const ScriptedAnswer kOngoing{425, R"({"dtm_result":"ONGOING"})"};
const ScriptedAnswer kError{500, "database down"};

std::chrono::steady_clock::time_point Deadline() {
  return std::chrono::steady_clock::now() + std::chrono::seconds(30);
}

// A message of two steps to the participant, checked back at /query_prepared.
json Message(const ParticipantServer& p, const std::string& gid, int timeout_to_fail = 1) {
  return {{"gid", gid},
          {"trans_type", "msg"},
          {"steps", {{{"action", p.Url("/points")}}, {{"action", p.Url("/ship")}}}},
          {"payloads", {R"({"points":10})", R"({"parcel":1})"}},
          {"query_prepared", p.Url("/query_prepared")},
          {"timeout_to_fail", timeout_to_fail}};
}

// A settled on a database of its own, restartable as after kill -9.
struct Coordinator : testing::RestartableSettled {
  Coordinator() : RestartableSettled(kArgs) {}
  int Post(const std::string& route, const json& body) {
    return client->PostJson("/api/settle/" + route, body).status;
  }
  std::string WaitForEnd(const std::string& gid) {
    return testing::WaitForFinalStatus(*client, gid, Deadline());
  }
};

TEST_CASE("a prepared message whose client died is checked back by the restarted coordinator",
          "[process][msg][crash]") {
  ParticipantServer p;
  Coordinator c;
  SECTION("the local transaction committed: SUCCESS, delivered") {
    REQUIRE(c.Post("prepare", Message(p, "m1")) == 200);
    c.KillAndRestart();  // 200 means stored: the message survives
    CHECK(c.WaitForEnd("m1") == "succeed");
    const auto check = p.CallsTo("/query_prepared").at(0);
    CHECK(check.method == "GET");
    CHECK(check.query.at("gid") == "m1");
    CHECK(check.query.at("trans_type") == "msg");
    CHECK(check.query.at("branch_id") == "00");
    CHECK(check.query.at("op") == "msg");
    REQUIRE(p.CountCalls("/points") == 1);
    CHECK(p.CallsTo("/points")[0].body == R"({"points":10})");
    CHECK(p.CallsTo("/points")[0].query.at("op") == "action");
    CHECK(p.CountCalls("/ship") == 1);
  }
  SECTION("it never committed: FAILURE, nothing delivered") {
    p.SetDefault("/query_prepared", kFailure);
    REQUIRE(c.Post("prepare", Message(p, "m1")) == 200);
    c.KillAndRestart();
    CHECK(c.WaitForEnd("m1") == "failed");
    CHECK(p.CountCalls("/points") == 0);
    CHECK(p.CountCalls("/ship") == 0);
  }
  SECTION("it does not know yet, or cannot answer: asked again until it knows") {
    p.Script("/query_prepared", {kOngoing, kError});
    REQUIRE(c.Post("prepare", Message(p, "m1")) == 200);
    CHECK(c.WaitForEnd("m1") == "succeed");
    CHECK(p.CountCalls("/query_prepared") == 3);
    CHECK(p.CountCalls("/points") == 1);
  }
}

TEST_CASE("a submitted message is delivered, in order, even across kill -9 after its submit",
          "[process][msg][crash]") {
  ParticipantServer p;
  Coordinator c;
  REQUIRE(c.Post("prepare", Message(p, "m1", 60)) == 200);
  REQUIRE(c.Post("submit", Message(p, "m1", 60)) == 200);
  c.KillAndRestart();
  CHECK(c.WaitForEnd("m1") == "succeed");
  CHECK(p.CountCalls("/query_prepared") == 0);
  REQUIRE(p.CountCalls("/points") >= 1);  // a crash may repeat a delivery, never lose one
  REQUIRE(p.CountCalls("/ship") >= 1);
  // The second step goes out only once the first has been acknowledged.
  CHECK(p.CallsTo("/ship")[0].received_at >= p.CallsTo("/points")[0].answered_at);
}

TEST_CASE("kill -9 while a delivery is in flight: the restarted coordinator delivers again",
          "[process][msg][crash]") {
  ParticipantServer p;
  Coordinator c;
  p.SetDefault("/points", ScriptedAnswer{.held = true});
  json direct = Message(p, "m1");
  direct.erase("query_prepared");
  REQUIRE(c.Post("submit", direct) == 200);  // without a prepare
  REQUIRE(p.WaitForHeld(1));
  c.settled->Kill();
  p.SetDefault("/points", ScriptedAnswer{});
  p.Release();  // the answer goes to a coordinator that is gone
  c.Start();
  CHECK(c.WaitForEnd("m1") == "succeed");
  CHECK(p.CountCalls("/points") >= 2);
  CHECK(p.CountCalls("/ship") == 1);
}

TEST_CASE("abort of a prepared message fails it at once, nothing is ever delivered",
          "[process][msg]") {
  ParticipantServer p;
  Coordinator c;
  REQUIRE(c.Post("prepare", Message(p, "m1")) == 200);
  REQUIRE(c.Post("abort", json{{"gid", "m1"}, {"trans_type", "msg"}}) == 200);
  CHECK(testing::StatusOf(*c.client, "m1") == "failed");
  const auto late = c.client->PostJson("/api/settle/submit", Message(p, "m1"));
  CHECK(late.status == 409);
  CHECK(p.Calls().empty());
}

TEST_CASE("best-effort notification gives up after retry_limit and raises the alert",
          "[process][msg]") {
  ParticipantServer receiver;
  ParticipantServer alerts;
  Coordinator c;
  c.args.push_back("--alert-webhook");
  c.args.push_back(alerts.Url("/alerts"));
  c.KillAndRestart();
  receiver.SetDefault("/notify", kError);
  REQUIRE(c.Post("submit", json{{"gid", "n1"},
                                {"trans_type", "msg"},
                                {"steps", {{{"action", receiver.Url("/notify")}}}},
                                {"payloads", {R"({"order":42})"}},
                                {"retry_limit", 3}}) == 200);
  CHECK(c.WaitForEnd("n1") == "failed");
  CHECK(receiver.CountCalls("/notify") == 3);
  const auto q = c.client->Get("/api/settle/query?gid=n1");
  CHECK_THAT(q.json["transaction"]["rollback_reason"].get<std::string>(),
             Catch::Contains("retry_limit 3") && Catch::Contains("HTTP 500"));
  REQUIRE(alerts.WaitForCalls("/alerts", 1));
  const json alert = json::parse(alerts.CallsTo("/alerts")[0].body);
  CHECK(alert["event"] == "transaction_gave_up");
  CHECK(alert["gid"] == "n1");
  CHECK(alert["url"] == receiver.Url("/notify"));
}

TEST_CASE("topics: DTM's subscribe calls, then a topic step reaches every subscriber",
          "[process][msg][topics]") {
  ParticipantServer p;
  Coordinator c;
  auto subscribe = [&](const std::string& topic, const std::string& path) {
    return c.client->Get("/api/dtmsvr/subscribe?topic=" + topic + "&url=" + p.Url(path) +
                         "&remark=test");
  };
  REQUIRE(subscribe("orders", "/points").status == 200);
  REQUIRE(subscribe("orders", "/mail").status == 200);
  CHECK(subscribe("orders", "/mail").status == 409);
  const auto topics = c.client->Get("/api/settle/topics");
  REQUIRE(topics.status == 200);
  CHECK(topics.json["topics"][0]["name"] == "orders");
  CHECK(topics.json["topics"][0]["subscribers"].size() == 2);

  REQUIRE(c.Post("submit", json{{"gid", "m1"},
                                {"trans_type", "msg"},
                                {"steps", {{{"action", "topic://orders"}}}},
                                {"payloads", {R"({"order":1})"}}}) == 200);
  CHECK(c.WaitForEnd("m1") == "succeed");
  CHECK(p.CountCalls("/points") == 1);
  CHECK(p.CountCalls("/mail") == 1);
  CHECK(p.CallsTo("/mail")[0].query.at("branch_id") == "01-02");

  const auto nobody =
      c.client->PostJson("/api/settle/submit", json{{"gid", "m2"},
                                                    {"trans_type", "msg"},
                                                    {"steps", {{{"action", "topic://nobody"}}}},
                                                    {"payloads", {"{}"}}});
  CHECK(nobody.status == 400);
  CHECK_THAT(nobody.json["message"].get<std::string>(),
             Catch::StartsWith("steps[0].action: topic nobody"));
  const auto gone = c.client->Get("/api/dtmsvr/unsubscribe?topic=orders&url=" + p.Url("/nope"));
  CHECK(gone.status == 409);
  CHECK(c.client->Get("/api/dtmsvr/subscribe?topic=orders").status == 400);
}

TEST_CASE("a message's bad fields get a 400 naming them, the coordinator keeps serving",
          "[process][msg][bad-input]") {
  ParticipantServer p;
  Coordinator c;
  auto message_of = [&](const json& body) {
    const auto r = c.client->PostJson("/api/settle/prepare", body);
    CHECK(r.status == 400);
    return r.json.value("message", "");
  };
  json no_check = Message(p, "m1");
  no_check.erase("query_prepared");
  CHECK_THAT(message_of(no_check), Catch::StartsWith("query_prepared: required"));
  json bad_delay = Message(p, "m1");
  bad_delay["custom_data"] = R"({"delay":"soon"})";
  CHECK_THAT(message_of(bad_delay), Catch::StartsWith("custom_data.delay"));
  json compensated = Message(p, "m1");
  compensated["steps"][0]["compensate"] = p.Url("/undo");
  CHECK_THAT(message_of(compensated), Catch::StartsWith("steps[0].compensate"));
  json short_payloads = Message(p, "m1");
  short_payloads["payloads"] = {"{}"};
  CHECK_THAT(message_of(short_payloads), Catch::StartsWith("payloads"));
  CHECK(testing::StatusOf(*c.client, "m1").empty());  // nothing stored
  REQUIRE(c.Post("prepare", Message(p, "m1")) == 200);
}

TEST_CASE("XA over HTTP: submit commits and abort rolls back each branch at its url",
          "[process][xa]") {
  ParticipantServer p;
  Coordinator c;
  for (const std::string gid : {"x-commit", "x-abort"}) {
    REQUIRE(c.Post("prepare", json{{"gid", gid}, {"trans_type", "xa"}}) == 200);
    for (const std::string id : {"01", "02"}) {
      REQUIRE(c.Post("registerXaBranch", json{{"gid", gid},
                                              {"trans_type", "xa"},
                                              {"branch_id", id},
                                              {"url", p.Url("/xa" + id)}}) == 200);
    }
  }
  REQUIRE(c.Post("submit", json{{"gid", "x-commit"}, {"trans_type", "xa"}}) == 200);
  REQUIRE(c.Post("abort", json{{"gid", "x-abort"}, {"trans_type", "xa"}}) == 200);
  CHECK(c.WaitForEnd("x-commit") == "succeed");
  CHECK(c.WaitForEnd("x-abort") == "failed");
  std::multiset<std::string> seen;
  for (const auto& call : p.Calls()) {
    CHECK(call.method == "POST");  // as DTM calls XA's phase 2
    seen.insert(call.path + " " + call.query.at("gid") + " " + call.query.at("op"));
  }
  CHECK(seen == std::multiset<std::string>{"/xa01 x-commit commit", "/xa02 x-commit commit",
                                           "/xa01 x-abort rollback", "/xa02 x-abort rollback"});
}

}  // namespace
}  // namespace settle
