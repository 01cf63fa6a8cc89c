// End-to-end flows through the real HTTP API with real participant servers on 127.0.0.1.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "in_process_settled.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::ParticipantServer;
using testing::ReceivedCall;
using testing::ScriptedAnswer;

const std::string kBody = R"({"amount": 30})";  // forwarded byte for byte, space included

json SagaBody(const std::string& gid, ParticipantServer& p, int steps) {
  json body = {
      {"gid", gid}, {"trans_type", "saga"}, {"steps", json::array()}, {"payloads", json::array()}};
  for (int i = 1; i <= steps; ++i) {
    const std::string n = std::to_string(i);
    body["steps"].push_back(
        {{"action", p.Url("/step" + n)}, {"compensate", p.Url("/step" + n + "Compensate")}});
    body["payloads"].push_back(kBody);
  }
  return body;
}

// Phase 1 of a TCC as a client SDK runs it: prepare, then for each branch registerBranch and
// the Try call. Returns whether every Try answered 200.
bool TccPhaseOne(InProcessSettled& s, ParticipantServer& p, const std::string& gid, int branches,
                 json options = json::object()) {
  json prepare = {{"gid", gid}, {"trans_type", "tcc"}};
  prepare.update(options);
  REQUIRE(s.Call("prepare", prepare).status == 200);
  testing::JsonClient participant(p.port());
  bool all_tried = true;
  for (int i = 1; i <= branches; ++i) {
    const std::string id = BranchIdForIndex(static_cast<std::size_t>(i - 1));
    const std::string n = std::to_string(i);
    REQUIRE(s.Call("registerBranch", {{"gid", gid},
                                      {"trans_type", "tcc"},
                                      {"branch_id", id},
                                      {"data", kBody},
                                      {"confirm", p.Url("/b" + n + "Confirm")},
                                      {"cancel", p.Url("/b" + n + "Cancel")}})
                .status == 200);
    const auto tried = participant.Post(
        "/b" + n + "Try?gid=" + gid + "&trans_type=tcc&branch_id=" + id + "&op=try", kBody);
    all_tried = all_tried && tried.status == 200;
  }
  return all_tried;
}

TEST_CASE("a TCC committed over HTTP confirms every branch exactly as the protocol says",
          "[http][tcc]") {
  ParticipantServer p;
  InProcessSettled s;
  REQUIRE(TccPhaseOne(s, p, "tcc-commit", 2));
  const auto submitted =
      s.Call("submit", {{"gid", "tcc-commit"}, {"trans_type", "tcc"}, {"wait_result", true}});
  CHECK(submitted.status == 200);
  CHECK(submitted.json["dtm_result"] == "SUCCESS");
  CHECK(s.StatusOf("tcc-commit") == "succeed");

  for (const std::string n : {"1", "2"}) {
    const auto confirms = p.CallsTo("/b" + n + "Confirm");
    REQUIRE(confirms.size() == 1);
    const ReceivedCall& c = confirms[0];
    CHECK(c.method == "POST");
    CHECK(c.body == kBody);
    CHECK(c.query.at("gid") == "tcc-commit");
    CHECK(c.query.at("trans_type") == "tcc");
    CHECK(c.query.at("branch_id") == "0" + n);
    CHECK(c.query.at("op") == "confirm");
    CHECK(c.headers.at("Content-Type") == "application/json");
    CHECK(p.CountCalls("/b" + n + "Cancel") == 0);
  }
  const auto q = s.Query("tcc-commit");
  CHECK(q["branches"].size() == 4);
  CHECK(q["transaction"]["finish_time"].is_string());
}

TEST_CASE("an aborted TCC sends cancel to every registered branch, even one whose Try failed",
          "[http][tcc]") {
  ParticipantServer p;
  p.SetDefault("/b2Try", {409, R"({"dtm_result":"FAILURE"})"});
  InProcessSettled s;
  CHECK_FALSE(TccPhaseOne(s, p, "tcc-abort", 2));
  const auto aborted = s.Call(
      "abort",
      {{"gid", "tcc-abort"}, {"trans_type", "tcc"}, {"rollback_reason", "Try of 02 failed"}});
  CHECK(aborted.status == 200);
  REQUIRE(s.WaitForStatus("tcc-abort", "failed"));
  CHECK(p.CountCalls("/b1Cancel") == 1);
  CHECK(p.CountCalls("/b2Cancel") == 1);
  CHECK(p.CountCalls("/b1Confirm") + p.CountCalls("/b2Confirm") == 0);
  CHECK(s.Query("tcc-abort")["transaction"]["rollback_reason"] == "Try of 02 failed");
  // No new Try can be registered once the transaction is aborting or failed.
  const auto late = s.Call("registerBranch", {{"gid", "tcc-abort"},
                                              {"trans_type", "tcc"},
                                              {"branch_id", "03"},
                                              {"confirm", p.Url("/c")},
                                              {"cancel", p.Url("/x")}});
  CHECK(late.status == 409);
  CHECK(late.json["dtm_result"] == "FAILURE");
}

// The body DTM's Python SDK (dtmcli-py's Msg) posts to prepare, submit and abort alike: its
// whole TransBase, nulls, zeros and empty lists included. The SDK itself cannot run in CI
// without downloads, so this replays its calls in its order.
json PythonSdkMsg(const std::string& gid, const std::vector<std::string>& actions,
                  const std::string& query_prepared) {
  json body = {{"gid", gid},
               {"trans_type", "msg"},
               {"custom_data", nullptr},
               {"steps", json::array()},
               {"payloads", json::array()},
               {"query_prepared", query_prepared.empty() ? json(nullptr) : json(query_prepared)},
               {"protocol", nullptr},
               {"wait_result", false},
               {"timeout_to_fail", 0},
               {"request_timeout", 8},
               {"retry_interval", 0},
               {"passthrough_headers", json::array()},
               {"branch_headers", json::object()},
               {"concurrent", false}};
  for (const std::string& action : actions) {
    body["steps"].push_back({{"action", action}});
    body["payloads"].push_back(json{{"amount", 30}}.dump());
  }
  return body;
}

TEST_CASE("DTM's Python SDK Msg: prepare, submit, and abort, as it sends them",
          "[http][msg][compat]") {
  ParticipantServer p;
  InProcessSettled s;
  SECTION("do_and_submit with a committed local transaction: prepare then submit") {
    const json body =
        PythonSdkMsg("py-msg", {p.Url("/TransOut"), p.Url("/TransIn")}, p.Url("/QueryPrepared"));
    REQUIRE(s.client().PostJson("/api/dtmsvr/prepare", body).status == 200);
    CHECK(s.StatusOf("py-msg") == "prepared");
    REQUIRE(s.client().PostJson("/api/dtmsvr/submit", body).status == 200);
    REQUIRE(p.WaitForCalls("/TransIn", 1));
    CHECK(p.CallsTo("/TransOut").at(0).body == R"({"amount":30})");
    CHECK(p.CallsTo("/TransOut").at(0).query.at("trans_type") == "msg");
    CHECK(p.CallsTo("/TransIn").at(0).query.at("branch_id") == "02");
    CHECK(p.CountCalls("/QueryPrepared") == 0);
  }
  SECTION("do_and_submit whose local transaction failed: prepare then abort") {
    const json body = PythonSdkMsg("py-abort", {p.Url("/TransOut")}, p.Url("/QueryPrepared"));
    REQUIRE(s.client().PostJson("/api/dtmsvr/prepare", body).status == 200);
    REQUIRE(s.client().PostJson("/api/dtmsvr/abort", body).status == 200);
    CHECK(s.StatusOf("py-abort") == "failed");
    CHECK(p.Calls().empty());
  }
  SECTION("a plain submit without a prepare") {
    const json body = PythonSdkMsg("py-direct", {p.Url("/TransOut")}, "");
    REQUIRE(s.client().PostJson("/api/dtmsvr/submit", body).status == 200);
    REQUIRE(p.WaitForCalls("/TransOut", 1));
  }
}

TEST_CASE("a saga submitted through the DTM alias succeeds with bodies forwarded byte for byte",
          "[http][saga]") {
  ParticipantServer p;
  InProcessSettled s;
  json body = SagaBody("saga-ok", p, 2);
  body["wait_result"] = true;
  body["branch_headers"] = {{"Authorization", "Bearer secret"}};
  const auto r = s.client().PostJson("/api/dtmsvr/submit", body);
  CHECK(r.status == 200);
  CHECK(s.StatusOf("saga-ok") == "succeed");
  const auto first = p.CallsTo("/step1");
  const auto second = p.CallsTo("/step2");
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  CHECK(first[0].body == kBody);
  CHECK(first[0].query.at("op") == "action");
  CHECK(first[0].query.at("trans_type") == "saga");
  CHECK(first[0].headers.at("Authorization") == "Bearer secret");
  CHECK(first[0].answered_at <= second[0].received_at);
  CHECK(p.CountCalls("/step1Compensate") + p.CountCalls("/step2Compensate") == 0);
}

TEST_CASE("a failed saga compensates in reverse order, the failed step included", "[http][saga]") {
  ParticipantServer p;
  p.SetDefault("/step2", {409, R"({"dtm_result":"FAILURE","message":"insufficient funds"})"});
  InProcessSettled s;
  json body = SagaBody("saga-fail", p, 3);
  body["wait_result"] = true;
  const auto r = s.Call("submit", body);
  CHECK(r.status == 409);
  CHECK(r.json["dtm_result"] == "FAILURE");
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::Contains("insufficient funds"));
  CHECK(s.StatusOf("saga-fail") == "failed");
  const auto c2 = p.CallsTo("/step2Compensate");
  const auto c1 = p.CallsTo("/step1Compensate");
  REQUIRE(c2.size() == 1);
  REQUIRE(c1.size() == 1);
  CHECK(c2[0].answered_at <= c1[0].received_at);
  CHECK(c2[0].query.at("op") == "compensate");
  CHECK(p.CountCalls("/step3") == 0);
  CHECK(p.CountCalls("/step3Compensate") == 0);
}

// Holds each request until `expected` requests have arrived: proves they were in flight
// together, without measuring time.
class Gate {
 public:
  explicit Gate(int expected) : expected_(expected) {}
  ScriptedAnswer Pass() {
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.notify_all();
    const bool together =
        cv_.wait_for(lock, std::chrono::seconds(10), [&] { return arrived_ >= expected_; });
    if (!together) return {500, "gate timed out"};
    return {};
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int expected_;
  int arrived_ = 0;
};

TEST_CASE("a concurrent saga runs independent steps together and waits for its orders",
          "[http][saga]") {
  ParticipantServer p;
  Gate gate(2);
  p.SetHandler("/step1", [&](const ReceivedCall&) { return gate.Pass(); });
  p.SetHandler("/step2", [&](const ReceivedCall&) { return gate.Pass(); });
  InProcessSettled s;
  json body = SagaBody("saga-concurrent", p, 3);
  body["custom_data"] = R"({"concurrent":true,"orders":{"2":[0,1]}})";
  body["wait_result"] = true;
  CHECK(s.Call("submit", body).status == 200);
  CHECK(s.StatusOf("saga-concurrent") == "succeed");
  const auto third = p.CallsTo("/step3");
  REQUIRE(third.size() == 1);
  CHECK(p.CallsTo("/step1")[0].answered_at <= third[0].received_at);
  CHECK(p.CallsTo("/step2")[0].answered_at <= third[0].received_at);
}

TEST_CASE("TCC phase 2 confirms all branches in parallel", "[http][tcc]") {
  ParticipantServer p;
  Gate gate(3);
  for (const std::string n : {"1", "2", "3"}) {
    p.SetHandler("/b" + n + "Confirm", [&](const ReceivedCall&) { return gate.Pass(); });
  }
  InProcessSettled s;
  REQUIRE(TccPhaseOne(s, p, "tcc-parallel", 3));
  CHECK(s.Call("submit", {{"gid", "tcc-parallel"}, {"trans_type", "tcc"}, {"wait_result", true}})
            .status == 200);
}

TEST_CASE("425, ONGOING and 500 answers are retried until the branch succeeds", "[http][retry]") {
  ParticipantServer p;
  p.Script("/step1", {{425, ""}, {200, R"({"dtm_result":"ONGOING"})"}});
  p.Script("/step2", {{500, "database is down"}});
  InProcessSettled s;
  CHECK(s.Call("submit", SagaBody("saga-retry", p, 2)).status == 200);
  REQUIRE(s.WaitForStatus("saga-retry", "succeed"));
  CHECK(p.CountCalls("/step1") == 3);
  CHECK(p.CountCalls("/step2") == 2);
  const auto branches = s.Query("saga-retry")["branches"];
  for (const auto& b : branches) {
    if (b["op"] != "action") continue;
    CHECK(b["status"] == "succeed");
    CHECK(b["attempts"] == (b["branch_id"] == "01" ? 3 : 2));
  }
}

TEST_CASE("a confirm answering FAILURE is retried, flagged stuck, and completes later",
          "[http][retry]") {
  ParticipantServer p;
  std::atomic<bool> fixed{false};
  p.SetHandler("/b1Confirm", [&](const ReceivedCall&) {
    return fixed ? ScriptedAnswer{} : ScriptedAnswer{409, R"({"dtm_result":"FAILURE"})"};
  });
  InProcessSettled s;
  REQUIRE(TccPhaseOne(s, p, "tcc-stuck", 1));
  CHECK(s.Call("submit", {{"gid", "tcc-stuck"}, {"trans_type", "tcc"}}).status == 200);
  REQUIRE(
      s.WaitUntil("tcc-stuck", [](const json& q) { return q["transaction"]["stuck"] == true; }));
  CHECK(s.client().Get("/api/settle/all?stuck=true").json["transactions"][0]["gid"] == "tcc-stuck");
  const auto q = s.Query("tcc-stuck");
  CHECK(q["transaction"]["status"] == "submitted");
  fixed = true;
  REQUIRE(s.WaitForStatus("tcc-stuck", "succeed"));
  CHECK(s.Query("tcc-stuck")["transaction"]["stuck"] == false);
}

TEST_CASE("a TCC left prepared is aborted by timeout_to_fail and its branches cancelled",
          "[http][tcc]") {
  ParticipantServer p;
  InProcessSettled s;
  REQUIRE(TccPhaseOne(s, p, "tcc-stale", 1, {{"timeout_to_fail", 1}}));
  REQUIRE(s.WaitForStatus("tcc-stale", "failed"));
  CHECK(p.CountCalls("/b1Cancel") == 1);
  CHECK_THAT(s.Query("tcc-stale")["transaction"]["rollback_reason"].get<std::string>(),
             Catch::Contains("timeout_to_fail"));
}

TEST_CASE("wait_result answers 200, 409 or 425 after one pass", "[http][wait]") {
  ParticipantServer p;
  p.SetDefault("/step2", {409, R"({"dtm_result":"FAILURE"})"});
  p.SetDefault("/step3", {500, "always broken"});
  InProcessSettled s;
  json ok = {{"gid", "w-ok"},
             {"trans_type", "saga"},
             {"wait_result", true},
             {"steps", {{{"action", p.Url("/step1")}}}},
             {"payloads", {kBody}}};
  CHECK(s.Call("submit", ok).status == 200);

  json failed = ok;
  failed["gid"] = "w-failed";
  failed["steps"][0]["action"] = p.Url("/step2");
  const auto f = s.Call("submit", failed);
  CHECK(f.status == 409);
  CHECK(f.json["dtm_result"] == "FAILURE");

  json pending = ok;
  pending["gid"] = "w-pending";
  pending["steps"][0]["action"] = p.Url("/step3");
  const auto r = s.Call("submit", pending);
  CHECK(r.status == 425);
  CHECK(r.json["dtm_result"] == "ONGOING");
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::Contains("always broken"));
  CHECK(s.Call("forceStop", {{"gid", "w-pending"}}).status == 200);
  CHECK(s.StatusOf("w-pending") == "failed");
}

TEST_CASE("duplicate submit and abort are idempotent", "[http][idempotency]") {
  ParticipantServer p;
  // Phase 2 is held, so that the duplicates arrive while the first request's work is under way.
  const ScriptedAnswer held{200, R"({"dtm_result":"SUCCESS"})", {}, /*held=*/true};
  p.SetDefault("/b1Confirm", held);
  p.SetDefault("/b1Cancel", held);
  InProcessSettled s;
  REQUIRE(TccPhaseOne(s, p, "dup-submit", 1));
  const json submit = {{"gid", "dup-submit"}, {"trans_type", "tcc"}};
  CHECK(s.Call("submit", submit).status == 200);
  REQUIRE(p.WaitForHeld(1));
  CHECK(s.Call("submit", submit).status == 200);  // while the confirm is in flight
  p.Release();
  REQUIRE(s.WaitForStatus("dup-submit", "succeed"));
  CHECK(p.CountCalls("/b1Confirm") == 1);
  CHECK(s.Call("submit", submit).status == 409);  // finished: refused, not re-run

  REQUIRE(TccPhaseOne(s, p, "dup-abort", 1));
  const json abort = {{"gid", "dup-abort"}, {"trans_type", "tcc"}};
  CHECK(s.Call("abort", abort).status == 200);
  REQUIRE(p.WaitForHeld(1));
  CHECK(s.Call("abort", abort).status == 200);  // while the cancel is in flight
  p.Release();
  REQUIRE(s.WaitForStatus("dup-abort", "failed"));
  CHECK(p.CountCalls("/b1Cancel") == 1);
  CHECK(s.Call("abort", abort).status == 409);  // finished
  CHECK(s.Call("submit", {{"gid", "dup-abort"}, {"trans_type", "tcc"}}).status == 409);

  json saga = SagaBody("dup-saga", p, 1);
  saga["wait_result"] = true;
  CHECK(s.Call("submit", saga).status == 200);
  CHECK(s.Call("submit", saga).status == 409);
  CHECK(p.CountCalls("/step1") == 1);
}

TEST_CASE("a participant URL on localhost reaches a participant listening on 127.0.0.1", "[http]") {
  ParticipantServer p;
  InProcessSettled s;
  const std::string url = "http://localhost:" + std::to_string(p.port()) + "/step1";
  json body = {{"gid", "on-localhost"},
               {"trans_type", "saga"},
               {"wait_result", true},
               {"steps", {{{"action", url}}}},
               {"payloads", {""}}};
  CHECK(s.Call("submit", body).status == 200);
  const auto calls = p.CallsTo("/step1");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].method == "GET");  // an empty payload is sent as a GET
}

TEST_CASE("resetNextCronTime makes a waiting retry happen now", "[http][operator]") {
  ParticipantServer p;
  p.Script("/step1", {{500, "down"}});
  InProcessSettled s([](app::ServerConfig& c) {
    c.coordinator.retry_interval = std::chrono::seconds(60);  // far beyond the test's patience
    c.retry.max_interval = std::chrono::seconds(600);
  });
  CHECK(s.Call("submit", SagaBody("reset-me", p, 1)).status == 200);
  REQUIRE(p.WaitForCalls("/step1", 1));
  REQUIRE(s.WaitUntil("reset-me", [](const json& q) { return q["branches"][0]["attempts"] == 1; }));
  CHECK(s.Call("resetNextCronTime", {{"gid", "reset-me"}}).status == 200);
  REQUIRE(s.WaitForStatus("reset-me", "succeed"));
  CHECK(p.CountCalls("/step1") == 2);
}

TEST_CASE("newGid, query and all serve both prefixes", "[http]") {
  ParticipantServer p;
  InProcessSettled s;
  CHECK(s.client().Get("/api/ping").json["msg"] == "pong");
  const auto a = s.client().Get("/api/settle/newGid");
  const auto b = s.client().Get("/api/dtmsvr/newGid");
  CHECK(a.json["dtm_result"] == "SUCCESS");
  CHECK(a.json["gid"] != b.json["gid"]);
  CHECK(IsValidGid(a.json["gid"].get<std::string>()));

  for (int i = 0; i < 5; ++i) {
    json saga = SagaBody("list-" + std::to_string(i), p, 1);
    saga["wait_result"] = true;
    REQUIRE(s.Call("submit", saga).status == 200);
  }
  REQUIRE(TccPhaseOne(s, p, "list-tcc", 1));
  const auto unknown = s.client().Get("/api/dtmsvr/query?gid=nobody");
  CHECK(unknown.status == 200);
  CHECK(unknown.json["transaction"].is_null());

  std::vector<std::string> seen;
  std::string position;
  for (int page = 0; page < 10; ++page) {
    const auto r = s.client().Get("/api/settle/all?trans_type=saga&limit=2&position=" + position);
    REQUIRE(r.status == 200);
    for (const auto& t : r.json["transactions"]) seen.push_back(t["gid"]);
    position = r.json["next_position"].get<std::string>();
    if (position.empty()) break;
  }
  CHECK(seen == std::vector<std::string>{"list-4", "list-3", "list-2", "list-1", "list-0"});
  const auto prepared = s.client().Get("/api/dtmsvr/all?status=prepared");
  REQUIRE(prepared.json["transactions"].size() == 1);
  CHECK(prepared.json["transactions"][0]["gid"] == "list-tcc");
}

}  // namespace
}  // namespace settle
