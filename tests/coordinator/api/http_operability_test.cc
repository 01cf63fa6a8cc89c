// What operators rely on, through the real HTTP API of an in-process settled: bearer tokens
// on every route, the Prometheus metrics, the stuck alert webhook and retention.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "admin_world.h"
#include "eventually.h"
#include "fake_clock.h"
#include "in_process_settled.h"
#include "metrics_sample.h"
#include "participant_server.h"
#include "settle/app/webhook_alerts.h"
#include "settle/core/completion.h"
#include "settle/net/client.h"

namespace settle {
namespace {

using testing::SampleValue;

using nlohmann::json;
using testing::AdminWorld;
using testing::ClientWith;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::kAdminToken;
using testing::kReadToken;
using testing::ParticipantServer;

json Saga(const std::string& gid, ParticipantServer& p) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", p.Url("/action")}, {"compensate", p.Url("/compensate")}}}},
          {"payloads", {R"({"amount":30})"}}};
}

TEST_CASE(
    "GET /api/admin/clock says how settled's clock stands against its reference, the metrics "
    "too",
    "[http][clock]") {
  InProcessSettled s;
  const JsonResponse clock = s.client().Get("/api/admin/clock");
  REQUIRE(clock.status == 200);
  // One instance on SQLite follows its host's wall clock.
  CHECK(clock.json["reference"] == "host");
  CHECK(clock.json["measured"] == true);
  CHECK(clock.json["claiming"] == true);
  CHECK(clock.json["following_ms"] == 0);
  const std::string metrics = s.client().Get("/api/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("settle_clock_offset_seconds{reference=\"host\"} 0"));
  CHECK_THAT(metrics, Catch::Contains("settle_clock_claiming{reference=\"host\"} 1"));
}

TEST_CASE("with tokens, a request without one gets 401 naming the header, ping stays open",
          "[http][auth]") {
  AdminWorld world;
  JsonClient anonymous(world.settled.port());

  const JsonResponse refused = anonymous.Get("/api/settle/query?gid=g1");
  CHECK(refused.status == 401);
  CHECK(refused.www_authenticate == "Bearer");
  CHECK_THAT(refused.json["message"].get<std::string>(), Catch::Contains("Authorization: Bearer"));
  CHECK(anonymous.Post("/api/dtmsvr/prepare", R"({"gid":"g1","trans_type":"tcc"})").status == 401);
  CHECK(anonymous.Get("/api/metrics").status == 401);
  CHECK(
      ClientWith(world.settled.port(), "not-a-known-token-at-all").Get("/api/settle/all").status ==
      401);
  CHECK(anonymous.Get("/api/ping").status == 200);
  // Nothing was stored by the refused prepare.
  CHECK(world.reader.Get("/api/settle/query?gid=g1").json["transaction"] == nullptr);
}

TEST_CASE("each token level reaches its routes and gets 403 on the ones above it", "[http][auth]") {
  AdminWorld world;
  ParticipantServer p;

  // read: queries and metrics, nothing that changes state.
  CHECK(world.reader.Get("/api/settle/all").status == 200);
  CHECK(world.reader.Get("/api/metrics").status == 200);
  const JsonResponse forbidden = world.reader.PostJson("/api/settle/submit", Saga("s1", p));
  CHECK(forbidden.status == 403);
  CHECK_THAT(forbidden.json["message"].get<std::string>(),
             Catch::Contains("read") && Catch::Contains("needs client"));
  CHECK(world.reader.Get("/api/settle/newGid").status == 403);

  // client: runs transactions, as DTM's SDKs do with the token as an extra header.
  CHECK(world.client.Get("/api/dtmsvr/newGid").status == 200);
  REQUIRE(
      world.client.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
      200);
  CHECK(world.client.PostJson("/api/settle/submit", Saga("s1", p)).status == 200);
  CHECK(world.client.Get("/api/settle/query?gid=s1").status == 200);
  CHECK(world.client.PostJson("/api/settle/forceStop", {{"gid", "t1"}}).status == 403);
  CHECK(world.client.PostJson("/api/settle/resetNextCronTime", {{"gid", "t1"}}).status == 403);

  // admin: acts on any transaction.
  CHECK(world.admin.PostJson("/api/settle/forceStop", {{"gid", "t1"}}).status == 200);
  CHECK(world.reader.Get("/api/settle/query?gid=t1").json["transaction"]["status"] == "failed");
}

TEST_CASE(
    "/api/metrics reports transactions, branch calls, the store and the HTTP routes in "
    "Prometheus's text format",
    "[http][metrics]") {
  InProcessSettled s;
  ParticipantServer p;
  p.Script("/action", {{500, "boom"}});  // one retry before success
  json saga = Saga("s1", p);
  saga["wait_result"] = true;
  s.Call("submit", saga);
  REQUIRE(s.WaitForStatus("s1", "succeed"));
  REQUIRE(s.Call("prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status == 200);
  s.client().Get("/api/settle/no-such-route");

  const JsonResponse scraped = s.client().Get("/api/metrics");
  REQUIRE(scraped.status == 200);
  CHECK_THAT(scraped.content_type, Catch::StartsWith("text/plain; version=0.0.4"));
  const std::string& m = scraped.body;
  CHECK(SampleValue(m, "settle_transactions_started_total{type=\"saga\"}") == 1);
  CHECK(SampleValue(m, "settle_transactions_finished_total{type=\"saga\",status=\"succeed\"}") ==
        1);
  CHECK(SampleValue(m, "settle_transactions_unfinished{type=\"tcc\",status=\"prepared\"}") == 1);
  CHECK(SampleValue(m, "settle_transactions_unfinished{type=\"saga\",status=\"submitted\"}") == 0);
  CHECK(SampleValue(m, "settle_transactions_stuck{type=\"saga\"}") == 0);
  CHECK(SampleValue(m, "settle_branch_calls_total{op=\"action\",outcome=\"unknown\"}") == 1);
  CHECK(SampleValue(m, "settle_branch_calls_total{op=\"action\",outcome=\"success\"}") == 1);
  CHECK(SampleValue(m, "settle_branch_retries_total{op=\"action\"}") == 1);
  CHECK(SampleValue(m, "settle_branch_call_duration_seconds_count{op=\"action\"}") == 2);
  CHECK(SampleValue(m, "settle_store_commits_total") >= 2);
  CHECK(SampleValue(m, "settle_store_commit_duration_seconds_count") >= 2);
  CHECK(SampleValue(m, "settle_store_commit_batches_count") >= 2);
  CHECK(SampleValue(m, "settle_store_up") == 1);
  // The wait_result submit answered once: 200, or 425 if its pass ended before the retry.
  const auto count = [&m](const std::string& series) {
    return std::max(0.0, SampleValue(m, series));
  };
  CHECK(count("settle_http_requests_total{route=\"POST /api/settle/submit\",code=\"200\"}") +
            count("settle_http_requests_total{route=\"POST /api/settle/submit\",code=\"425\"}") ==
        1);
  CHECK(SampleValue(
            m, "settle_http_requests_total{route=\"POST /api/settle/prepare\",code=\"200\"}") == 1);
  CHECK(SampleValue(m, "settle_http_requests_total{route=\"unmatched\",code=\"404\"}") == 1);
  CHECK_THAT(m, Catch::Contains("# TYPE settle_branch_call_duration_seconds histogram\n"));
  CHECK_THAT(m, Catch::Contains("settle_store_commit_duration_seconds_bucket{le=\"+Inf\"}"));
}

TEST_CASE("a transaction that becomes stuck is POSTed to the alert webhook once",
          "[http][alerts]") {
  ParticipantServer webhook;
  InProcessSettled s([&webhook](app::ServerConfig& config) {
    config.alert_webhook = webhook.Url("/hooks/settle?team=payments");
    // Each saga retries on its own here: no circuit holds the host's calls after 5 failures.
    config.hosts.circuit.failures = 0;
  });
  ParticipantServer p;
  p.SetDefault("/action", {503, "down for maintenance"});  // stuck after 3 failures
  REQUIRE(s.Call("submit", Saga("s1", p)).status == 200);

  REQUIRE(webhook.WaitForCalls("/hooks/settle", 1));
  const auto call = webhook.CallsTo("/hooks/settle").at(0);
  CHECK(call.method == "POST");
  CHECK(call.query.at("team") == "payments");
  const json alert = json::parse(call.body);
  CHECK(alert["event"] == "transaction_stuck");
  CHECK(alert["gid"] == "s1");
  CHECK(alert["op"] == "action");
  CHECK(alert["url"] == p.Url("/action"));
  CHECK(alert["host"] == "http://127.0.0.1:" + std::to_string(p.port()));
  CHECK(alert["failures"] == 3);
  CHECK_THAT(alert["last_error"].get<std::string>(), Catch::Contains("503"));

  // Retries go on, and the alert is not repeated for each further failure. Alerts are sent
  // one at a time in order, so once s1's sixth failure is stored, any repeat of its alert
  // would reach the webhook before the alert of a saga that becomes stuck after it.
  REQUIRE(s.WaitUntil("s1", [](const json& q) {
    return q.is_object() && q["branches"].is_array() &&
           std::any_of(q["branches"].begin(), q["branches"].end(), [](const json& b) {
             return b["op"] == "action" && b["failures"].get<int>() >= 6;
           });
  }));
  REQUIRE(s.Call("submit", Saga("s2", p)).status == 200);
  REQUIRE(webhook.WaitForCalls("/hooks/settle", 2));
  const auto alerts = webhook.CallsTo("/hooks/settle");
  REQUIRE(alerts.size() == 2);
  CHECK(json::parse(alerts.at(1).body)["gid"] == "s2");
  // Counted once settled has read the webhook's answer, a moment after the webhook sent it.
  std::string m;
  testing::Eventually(
      [&] {
        m = s.client().Get("/api/metrics").body;
        return SampleValue(m, "settle_alerts_total{result=\"sent\"}") >= 2;
      },
      std::chrono::seconds(10));
  CHECK(SampleValue(m, "settle_alerts_total{result=\"sent\"}") == 2);
  CHECK(SampleValue(m, "settle_transactions_stuck{type=\"saga\"}") == 2);
}

TEST_CASE("a webhook that is down does not hold up transactions, the failed alert is counted",
          "[http][alerts]") {
  int closed_port = 0;
  {
    ParticipantServer gone;  // a port that was listening a moment ago
    closed_port = gone.port();
  }
  InProcessSettled s([closed_port](app::ServerConfig& config) {
    config.alert_webhook = "http://127.0.0.1:" + std::to_string(closed_port) + "/alert";
  });
  ParticipantServer p;
  p.Script("/action", {{503, "a"}, {503, "b"}, {503, "c"}});
  REQUIRE(s.Call("submit", Saga("s1", p)).status == 200);

  CHECK(s.WaitForStatus("s1", "succeed"));
  bool counted = false;
  for (int i = 0; i < 500 && !counted; ++i) {
    counted = SampleValue(s.client().Get("/api/metrics").body,
                          "settle_alerts_total{result=\"failed\"}") == 1;
    if (!counted) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(counted);
}

// A fake clock that signals its first monotonic reading, once taken: the first a WebhookAlerts
// takes is Stop's, which sets when the grace ends.
class FirstMonotonicReading final : public Clock {
 public:
  explicit FirstMonotonicReading(const testing::FakeClock& clock) : clock_(clock) {}
  TimePoint Now() const override { return clock_.Now(); }
  MonoTime Monotonic() const override {
    const MonoTime now = clock_.Monotonic();
    if (!read_.exchange(true)) taken_.Signal();
    return now;
  }
  void Wait() { taken_.Wait(); }

 private:
  const testing::FakeClock& clock_;
  mutable std::atomic<bool> read_{false};
  mutable Completion taken_;
};

TEST_CASE(
    "once the alerts stop, what is still queued when the grace has run out by the clock "
    "is given up unsent",
    "[http][alerts]") {
  ParticipantServer webhook;
  testing::FakeClock fake;
  FirstMonotonicReading clock(fake);
  asio::io_context io;  // run below, once Stop has set the end of the grace
  auto client = net::Client::Create();
  REQUIRE(client);
  auto alerts =
      app::WebhookAlerts::Create(webhook.Url("/alert"), clock, io.get_executor(), **client);
  REQUIRE(alerts);
  storage::Transaction tx;
  for (const char* gid : {"s1", "s2"}) {
    tx.global.gid = gid;
    (*alerts)->TransactionStuck(tx);
  }

  std::thread stopper([&] { (*alerts)->Stop(Duration(2000)); });
  clock.Wait();
  fake.Advance(Duration(2001));
  io.run();  // until both alerts are dealt with
  stopper.join();
  CHECK((*alerts)->sent() == 0);
  CHECK((*alerts)->failed() == 2);
  CHECK(webhook.Calls().empty());
}

TEST_CASE("with retention, finished transactions disappear and unfinished ones stay",
          "[http][retention]") {
  InProcessSettled s([](app::ServerConfig& config) {
    config.retention = {
        .keep = Duration(200), .batch_size = 2, .interval = Duration(50), .pause = Duration(1)};
  });
  ParticipantServer p;
  for (const char* gid : {"s1", "s2", "s3"}) {
    json saga = Saga(gid, p);
    saga["wait_result"] = true;
    REQUIRE(s.Call("submit", saga).status == 200);
  }
  REQUIRE(s.Call("prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status == 200);

  for (const char* gid : {"s1", "s2", "s3"}) {
    CHECK(s.WaitUntil(gid, [](const json& q) { return q["transaction"].is_null(); }));
  }
  CHECK(s.StatusOf("t1") == "prepared");
  CHECK(SampleValue(s.client().Get("/api/metrics").body, "settle_retention_deleted_total") == 3);
}

std::string HeaderOf(const JsonResponse& r, const std::string& name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

TEST_CASE("without tokens the console opens directly, with a strict content security policy",
          "[http][console]") {
  InProcessSettled s;
  const JsonResponse page = s.client().Get("/admin");
  CHECK(page.status == 200);
  CHECK_THAT(page.content_type, Catch::StartsWith("text/html"));
  CHECK_THAT(page.body, Catch::Contains("authentication is off"));
  CHECK_THAT(HeaderOf(page, "Content-Security-Policy"), Catch::Contains("script-src 'self'"));
  CHECK(HeaderOf(page, "Cache-Control") == "no-store");
  const JsonResponse script = s.client().Get("/admin/console.js");
  CHECK(script.status == 200);
  CHECK_THAT(script.content_type, Catch::StartsWith("text/javascript"));
  CHECK_THAT(script.body, Catch::Contains("resetNextCronTime"));
}

TEST_CASE("with tokens the console asks to sign in and keeps the session in a strict cookie",
          "[http][console][auth]") {
  AdminWorld world;
  JsonClient anonymous(world.settled.port());

  const JsonResponse form = anonymous.Get("/admin");
  CHECK(form.status == 401);
  CHECK_THAT(form.body, Catch::Contains("name=\"token\""));
  CHECK(anonymous.Get("/admin/console.js").status == 401);
  CHECK(anonymous.Get("/admin/login.css").status == 200);  // the sign-in form's own style

  const JsonResponse refused = anonymous.Post("/admin/login", "token=guess-0123456789abcdef",
                                              "application/x-www-form-urlencoded");
  CHECK(refused.status == 401);
  CHECK_THAT(refused.body, Catch::Contains("not accepted"));
  CHECK(HeaderOf(refused, "Set-Cookie").empty());

  const JsonResponse signed_in =
      anonymous.Post("/admin/login", "token=" + kReadToken, "application/x-www-form-urlencoded");
  CHECK(signed_in.status == 303);
  CHECK(HeaderOf(signed_in, "Location") == "/admin");
  const std::string cookie = HeaderOf(signed_in, "Set-Cookie");
  CHECK_THAT(cookie, Catch::Contains("HttpOnly") && Catch::Contains("SameSite=Strict"));

  JsonClient session(world.settled.port());
  session.SetHeader("Cookie", cookie.substr(0, cookie.find(';')));
  const JsonResponse console = session.Get("/admin");
  CHECK(console.status == 200);
  CHECK_THAT(console.body, Catch::Contains("signed in with read access"));
  CHECK(session.Get("/api/settle/all").status == 200);
  CHECK(session.Get("/api/metrics").status == 200);

  const JsonResponse signed_out =
      session.Post("/admin/logout", "", "application/x-www-form-urlencoded");
  CHECK(signed_out.status == 303);
  CHECK_THAT(HeaderOf(signed_out, "Set-Cookie"), Catch::Contains("Max-Age=0"));
}

TEST_CASE("a change made with the session cookie needs the console's own header",
          "[http][console][auth]") {
  AdminWorld world;
  JsonClient anonymous(world.settled.port());
  const JsonResponse signed_in =
      anonymous.Post("/admin/login", "token=" + kAdminToken, "application/x-www-form-urlencoded");
  const std::string cookie = HeaderOf(signed_in, "Set-Cookie");
  REQUIRE(world.settled.Call("prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status == 401);
  REQUIRE(
      world.admin.PostJson("/api/settle/prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status ==
      200);

  // What a page on another site could make the browser send: the cookie, no header.
  JsonClient forged(world.settled.port());
  forged.SetHeader("Cookie", cookie.substr(0, cookie.find(';')));
  const JsonResponse refused = forged.PostJson("/api/settle/forceStop", {{"gid", "t1"}});
  CHECK(refused.status == 403);
  CHECK_THAT(refused.body, Catch::Contains("X-Settle-Console"));
  CHECK(world.admin.Get("/api/settle/query?gid=t1").json["transaction"]["status"] == "prepared");

  forged.SetHeader("X-Settle-Console", "1");
  CHECK(forged.PostJson("/api/settle/forceStop", {{"gid", "t1"}}).status == 200);
  CHECK(world.admin.Get("/api/settle/query?gid=t1").json["transaction"]["status"] == "failed");
}

}  // namespace
}  // namespace settle
