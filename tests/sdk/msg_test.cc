// Msg, the transactional message builder, against a fake coordinator in this process (a
// ParticipantServer that records what the SDK posts to <server>/prepare, /submit and /abort),
// with the sender's data and barrier in SQLite.
#include "settle/sdk/msg.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "participant_server.h"
#include "sdk_test_support.h"
#include "settle/sdk/participant.h"
#include "sqlite_msg_ledger.h"
#include "wrapped_barrier_store.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using namespace settle::sdk::test;

constexpr const char* kRefused = R"({"dtm_result":"FAILURE","message":"gid taken"})";

// A coordinator that answers SUCCESS to everything and records it; the paths of what it got.
struct FakeCoordinator {
  ParticipantServer server;
  std::unique_ptr<Client> client = MakeClient(server.Url("/api/settle"));

  std::vector<std::string> Routes() const {
    std::vector<std::string> routes;
    for (const ReceivedCall& call : server.Calls()) routes.push_back(call.path);
    return routes;
  }
  json Body(const std::string& route) const {
    std::vector<ReceivedCall> calls = server.CallsTo("/api/settle/" + route);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].method == "POST");
    return json::parse(calls[0].body);
  }
};

const std::vector<std::string> kPrepareSubmit{"/api/settle/prepare", "/api/settle/submit"};
const std::vector<std::string> kPrepareAbort{"/api/settle/prepare", "/api/settle/abort"};
const std::vector<std::string> kPrepareOnly{"/api/settle/prepare"};

TEST_CASE("Msg posts DTM's msg body to prepare and the same body to submit", "[sdk][msg]") {
  FakeCoordinator coordinator;
  Msg msg(*coordinator.client, "m1");
  msg.Add("http://svc/TransIn", kInBody).AddTopic("transfers", kOutBody);

  REQUIRE(msg.Prepare("http://svc/QueryPrepared").ok());
  Result<Outcome> outcome = msg.Submit();

  REQUIRE(outcome.ok());
  CHECK(outcome->gid == "m1");
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  CHECK(coordinator.Routes() == kPrepareSubmit);
  const json expected = {
      {"gid", "m1"},
      {"trans_type", "msg"},
      {"steps", {{{"action", "http://svc/TransIn"}}, {{"action", "topic://transfers"}}}},
      {"payloads", {kInBody, kOutBody}},
      {"query_prepared", "http://svc/QueryPrepared"}};
  CHECK(coordinator.Body("prepare") == expected);
  CHECK(coordinator.Body("submit") == expected);
}

TEST_CASE("Msg submitted without a prepare carries no query_prepared", "[sdk][msg]") {
  FakeCoordinator coordinator;
  Msg msg(*coordinator.client, "m2");
  REQUIRE(msg.Add("http://svc/Notify", "").Submit().ok());
  CHECK(coordinator.Body("submit") == json{{"gid", "m2"},
                                           {"trans_type", "msg"},
                                           {"steps", {{{"action", "http://svc/Notify"}}}},
                                           {"payloads", {""}}});
}

TEST_CASE("Msg sends its options, concurrent and delay as DTM's SDKs do", "[sdk][msg]") {
  FakeCoordinator coordinator;
  Msg msg(*coordinator.client, "m3");
  TransOptions options;
  options.wait_result = true;
  options.timeout_to_fail = std::chrono::seconds(30);
  options.request_timeout = std::chrono::seconds(5);
  options.retry_interval = std::chrono::seconds(1);
  options.retry_limit = 4;
  options.branch_headers["Authorization"] = "Bearer b";
  msg.SetOptions(options)
      .Add("http://svc/A", "{}")
      .EnableConcurrent()
      .SetDelay(std::chrono::seconds(60));
  CHECK(json::parse(msg.ToJson()) == json{{"gid", "m3"},
                                          {"trans_type", "msg"},
                                          {"steps", {{{"action", "http://svc/A"}}}},
                                          {"payloads", {"{}"}},
                                          {"wait_result", true},
                                          {"timeout_to_fail", 30},
                                          {"request_timeout", 5},
                                          {"retry_interval", 1},
                                          {"retry_limit", 4},
                                          {"branch_headers", {{"Authorization", "Bearer b"}}},
                                          {"concurrent", true},
                                          {"custom_data", R"({"delay":60})"}});
}

TEST_CASE("Msg::Submit reads the coordinator's answer like a saga's submit", "[sdk][msg]") {
  FakeCoordinator coordinator;
  Msg msg(*coordinator.client, "m4");
  msg.Add("http://svc/A", "{}");
  SECTION("wait_result and SUCCESS: delivered") {
    msg.options().wait_result = true;
    CHECK(msg.Submit()->status == GlobalStatus::kSucceed);
  }
  SECTION("wait_result and FAILURE: failed, with the coordinator's reason") {
    coordinator.server.SetDefault("/api/settle/submit",
                                  {409, R"({"dtm_result":"FAILURE","message":"gave up"})"});
    msg.options().wait_result = true;
    Result<Outcome> outcome = msg.Submit();
    REQUIRE(outcome.ok());
    CHECK(outcome->status == GlobalStatus::kFailed);
    CHECK(outcome->reason == "gave up");
  }
  SECTION("without wait_result a FAILURE refuses the submit") {
    coordinator.server.SetDefault("/api/settle/submit", {409, kRefused});
    CHECK(msg.Submit().status().code() == StatusCode::kConflict);
  }
}

TEST_CASE("Msg::Abort posts only the gid and trans_type and reports the message failed",
          "[sdk][msg]") {
  FakeCoordinator coordinator;
  Msg msg(*coordinator.client, "m5");
  msg.Add("http://svc/A", "{}");
  REQUIRE(msg.Prepare("http://svc/QueryPrepared").ok());
  Result<Outcome> aborted = msg.Abort();
  REQUIRE(aborted.ok());
  CHECK(aborted->status == GlobalStatus::kFailed);
  CHECK(coordinator.Body("abort") == json{{"gid", "m5"}, {"trans_type", "msg"}});

  coordinator.server.SetDefault("/api/settle/abort", {409, kRefused});
  CHECK(msg.Abort().status().code() == StatusCode::kConflict);
}

TEST_CASE("Msg refuses bad input with InvalidArgument naming the field, before any request",
          "[sdk][msg]") {
  FakeCoordinator coordinator;
  auto refused = [&](const Status& s, const std::string& field) {
    INFO(s.ToString());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::StartsWith(field + ": "));
  };
  SECTION("an invalid gid") {
    for (const std::string& gid :
         std::vector<std::string>{"", "has space", std::string(129, 'g'), "semi;colon"}) {
      CAPTURE(gid);
      Msg msg(*coordinator.client, gid);
      msg.Add("http://svc/A", "{}");
      refused(msg.Prepare("http://svc/QueryPrepared"), "gid");
      refused(msg.Submit().status(), "gid");
      refused(msg.Abort().status(), "gid");
    }
  }
  SECTION("no steps") {
    Msg msg(*coordinator.client, "m6");
    refused(msg.Submit().status(), "steps");
    refused(msg.Prepare("http://svc/QueryPrepared"), "steps");
  }
  SECTION("an action that is not an http(s) URL or a topic") {
    for (const std::string action :
         {"", "ftp://svc/A", "svc/A", "http://svc/a b", "topic://", "topic://a b"}) {
      CAPTURE(action);
      Msg msg(*coordinator.client, "m7");
      msg.Add("http://svc/A", "{}").Add(action, "{}");
      refused(msg.Submit().status(), "steps[1].action");
    }
  }
  SECTION("an invalid query_prepared URL") {
    for (const std::string url : {"", "/QueryPrepared", "http://svc:99999/q"}) {
      CAPTURE(url);
      Msg msg(*coordinator.client, "m8");
      msg.Add("http://svc/A", "{}");
      refused(msg.Prepare(url), "query_prepared");
    }
  }
  SECTION("a negative delay") {
    Msg msg(*coordinator.client, "m9");
    msg.Add("http://svc/A", "{}").SetDelay(std::chrono::seconds(-1));
    refused(msg.Submit().status(), "delay");
  }
  CHECK(coordinator.server.Calls().empty());
}

TEST_CASE("DoAndSubmit: a local transaction that commits is prepared, then submitted",
          "[sdk][msg]") {
  FakeCoordinator coordinator;
  SqliteLedger db;
  Msg msg(*coordinator.client, "d1");
  msg.Add("http://svc/TransIn", kInBody);

  Result<Outcome> sent =
      msg.DoAndSubmit("http://svc/QueryPrepared", db.barrier(), WriteLedger(db, "d1"));

  INFO(sent.status().ToString());
  REQUIRE(sent.ok());
  CHECK(sent->status == GlobalStatus::kSubmitted);
  CHECK(coordinator.Routes() == kPrepareSubmit);
  CHECK(coordinator.Body("prepare").at("query_prepared") == "http://svc/QueryPrepared");
  CHECK(db.Rows("d1") == 1);
  CHECK(db.Reason("d1") == "msg");
}

TEST_CASE("DoAndSubmit: a local transaction that says no is rolled back and the message aborted",
          "[sdk][msg]") {
  FakeCoordinator coordinator;
  SqliteLedger db;
  Msg msg(*coordinator.client, "d2");
  msg.Add("http://svc/TransIn", kInBody);

  Result<Outcome> sent = msg.DoAndSubmit("http://svc/QueryPrepared", db.barrier(),
                                         [&](BarrierTransaction& tx) -> Status {
                                           if (Status s = db.Write(tx, "d2", 30); !s.ok()) return s;
                                           return Status::Conflict("insufficient funds");
                                         });

  CHECK(sent.status().code() == StatusCode::kConflict);
  CHECK(sent.status().message() == "insufficient funds");
  CHECK(coordinator.Routes() == kPrepareAbort);
  CHECK(coordinator.Body("abort") == json{{"gid", "d2"}, {"trans_type", "msg"}});
  CHECK(db.Rows("d2") == 0);
  // Aborted without asking the barrier: a late back-check still answers FAILURE.
  CHECK(QueryPrepared(db.barrier(), "d2").status.code() == StatusCode::kConflict);
}

TEST_CASE("DoAndSubmit: after an unknown outcome the barrier decides between submit and abort",
          "[sdk][msg]") {
  FakeCoordinator coordinator;
  SqliteLedger db;
  Msg msg(*coordinator.client, "d3");
  msg.Add("http://svc/TransIn", kInBody);

  SECTION("the local transaction committed although its COMMIT reported an error: submit") {
    // The first commit's answer is lost; the back-check's commit is answered.
    std::atomic<int> commits = 0;
    WrappedBarrierStore lost_answer(db.barrier().store(), [&](BarrierTransaction& real) {
      Status committed = real.Commit();
      if (committed.ok() && commits++ == 0) {
        return Status::Unavailable("connection lost after COMMIT");
      }
      return committed;
    });
    Barrier barrier(lost_answer, db.barrier().clock());
    Result<Outcome> sent =
        msg.DoAndSubmit("http://svc/QueryPrepared", barrier, WriteLedger(db, "d3"));
    CHECK(sent.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(sent.status().message(), Catch::Contains("connection lost after COMMIT"));
    CHECK(coordinator.Routes() == kPrepareSubmit);
    CHECK(db.Rows("d3") == 1);
    CHECK(db.Reason("d3") == "msg");
  }
  SECTION("the local transaction rolled back on an error: abort") {
    Result<Outcome> sent = msg.DoAndSubmit("http://svc/QueryPrepared", db.barrier(),
                                           [&](BarrierTransaction& tx) -> Status {
                                             if (Status s = db.Write(tx, "d3", 30); !s.ok())
                                               return s;
                                             return Status::Unavailable("ledger service down");
                                           });
    CHECK(sent.status().code() == StatusCode::kUnavailable);
    CHECK(coordinator.Routes() == kPrepareAbort);
    CHECK(db.Rows("d3") == 0);
    CHECK(db.Reason("d3") == "rollback");
  }
  SECTION("the database cannot say: neither, the coordinator's back-check decides later") {
    WrappedBarrierStore broken(db.barrier().store(), [](BarrierTransaction& real) {
      real.Rollback();
      return Status::Unavailable("disk I/O error");
    });
    Barrier barrier(broken, db.barrier().clock());
    Result<Outcome> sent =
        msg.DoAndSubmit("http://svc/QueryPrepared", barrier, WriteLedger(db, "d3"));
    CHECK(sent.status().code() == StatusCode::kUnavailable);
    CHECK(coordinator.Routes() == kPrepareOnly);
    CHECK(db.Rows("d3") == 0);
    CHECK(db.Reason("d3") == std::nullopt);
  }
}

TEST_CASE("DoAndSubmit: a refused prepare runs no local transaction", "[sdk][msg]") {
  FakeCoordinator coordinator;
  coordinator.server.SetDefault("/api/settle/prepare", {409, kRefused});
  SqliteLedger db;
  Msg msg(*coordinator.client, "d4");
  msg.Add("http://svc/TransIn", kInBody);
  std::atomic<bool> ran = false;

  Result<Outcome> sent =
      msg.DoAndSubmit("http://svc/QueryPrepared", db.barrier(), WriteLedger(db, "d4", &ran));

  CHECK(sent.status().code() == StatusCode::kConflict);
  CHECK_FALSE(ran);
  CHECK(coordinator.Routes() == kPrepareOnly);
  CHECK(db.Reason("d4") == std::nullopt);
}

TEST_CASE("Participant::OnQueryPrepared answers the coordinator's back-check over HTTP",
          "[sdk][msg]") {
  SqliteLedger db;
  REQUIRE(RunMsgLocalTransaction(db.barrier(), "q-ok", WriteLedger(db, "q-ok")).ok());
  Participant participant;
  participant.OnQueryPrepared("/QueryPrepared", db.barrier());
  Result<int> port = participant.Start("127.0.0.1", 0);
  REQUIRE(port.ok());
  auto client = MakeClient("http://127.0.0.1:1/api/settle");
  auto ask = [&](const std::string& query) {
    const std::string url = "http://127.0.0.1:" + std::to_string(*port) + "/QueryPrepared" + query;
    Result<Client::HttpAnswer> answer = client->CallUrl(url, "", std::chrono::seconds(10));
    REQUIRE(answer.ok());
    return *answer;
  };

  Client::HttpAnswer committed = ask("?gid=q-ok&trans_type=msg&branch_id=00&op=msg");
  CHECK(committed.status == 200);
  CHECK(json::parse(committed.body) == json{{"dtm_result", "SUCCESS"}});

  Client::HttpAnswer none = ask("?gid=q-none&trans_type=msg&branch_id=00&op=msg");
  CHECK(none.status == 409);
  CHECK(json::parse(none.body).at("dtm_result") == "FAILURE");
  CHECK(db.Reason("q-none") == "rollback");

  Client::HttpAnswer no_gid = ask("?trans_type=msg&branch_id=00&op=msg");
  CHECK(no_gid.status == 409);
  CHECK(json::parse(no_gid.body).at("message") == "gid: required in the query string");
}

}  // namespace
}  // namespace settle::sdk
