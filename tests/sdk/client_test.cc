#include "settle/sdk/client.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "participant_server.h"
#include "sdk_test_support.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using settle::testing::ParticipantServer;
using settle::testing::ScriptedAnswer;
using settle::testing::SettledProcess;
using settle::testing::TempDir;
using namespace settle::sdk::test;

TEST_CASE("Create refuses a server that is not an http(s):// URL", "[sdk][client]") {
  for (const std::string server :
       {"ftp://127.0.0.1/api/settle", "127.0.0.1:36789", "", "http://",
        "http://127.0.0.1:99999/api/settle", "http://127.0.0.1/api settle",
        "http://127.0.0.1:36789/api/settle?x=1"}) {
    CAPTURE(server);
    auto client = Client::Create(server);
    REQUIRE_FALSE(client.ok());
    CHECK(client.status().code() == StatusCode::kInvalidArgument);
  }
  CHECK(Client::Create("http://127.0.0.1:36789/api/settle").ok());
  CHECK(Client::Create("http://localhost/api/dtmsvr/").ok());
  CHECK(Client::Create("https://settle.example/api/settle").ok());
  CHECK(Client::Create("HTTPS://127.0.0.1:36789/api/settle").ok());
  ClientOptions bad_ca;
  bad_ca.ca_file = "/no/such/ca.pem";
  CHECK(Client::Create("https://settle.example/api/settle", bad_ca).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("Create refuses headers that cannot be sent", "[sdk][client]") {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"Bad Name", "x"}, {"X-Token", "a\r\nInjected: 1"}, {"Content-Length", "3"}}) {
    CAPTURE(name);
    ClientOptions options;
    options.headers[name] = value;
    auto client = Client::Create("http://127.0.0.1:36789/api/settle", options);
    REQUIRE_FALSE(client.ok());
    CHECK(client.status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("NewGid returns distinct gids from the coordinator", "[sdk][client][process]") {
  RealCoordinator coordinator;
  auto client = MakeClient(coordinator.Url());
  auto first = client->NewGid();
  auto second = client->NewGid();
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK_FALSE(first->empty());
  CHECK(IsValidGid(*first));
  CHECK(*first != *second);
}

TEST_CASE("Query returns nullopt for an unknown gid and the rows of a known one",
          "[sdk][client][process]") {
  RealCoordinator coordinator;
  auto client = MakeClient(coordinator.Url());

  auto unknown = client->Query("no-such-gid");
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->has_value());

  REQUIRE(client->Post("prepare", R"({"gid":"q1","trans_type":"tcc"})").ok());
  const json branch = {{"gid", "q1"},
                       {"trans_type", "tcc"},
                       {"branch_id", "01"},
                       {"data", R"({"amount":30})"},
                       {"confirm", "http://127.0.0.1:1/Confirm"},
                       {"cancel", "http://127.0.0.1:1/Cancel"}};
  REQUIRE(client->Post("registerBranch", branch.dump()).ok());

  auto known = client->Query("q1");
  REQUIRE(known.ok());
  REQUIRE(known->has_value());
  const TransactionInfo& tx = **known;
  CHECK(tx.gid == "q1");
  CHECK(tx.trans_type == TransType::kTcc);
  CHECK(tx.status == GlobalStatus::kPrepared);
  CHECK_FALSE(tx.stuck);
  REQUIRE(tx.branches.size() == 2);
  for (const BranchInfo& b : tx.branches) {
    CHECK(b.branch_id == "01");
    CHECK(b.status == BranchStatus::kPrepared);
    CHECK(b.attempts == 0);
    if (b.op == BranchOp::kConfirm) {
      CHECK(b.url == "http://127.0.0.1:1/Confirm");
    } else {
      CHECK(b.op == BranchOp::kCancel);
      CHECK(b.url == "http://127.0.0.1:1/Cancel");
    }
  }
}

TEST_CASE("Query sends the gid percent-encoded and refuses an answer that is not the protocol's",
          "[sdk][client]") {
  ParticipantServer fake;
  fake.Script("/api/settle/query", {{200, R"({"dtm_result":"SUCCESS"})"}});
  auto client = MakeClient(fake.Url("/api/settle"));
  auto answer = client->Query("a b&c");
  REQUIRE_FALSE(answer.ok());
  CHECK(answer.status().code() == StatusCode::kUnavailable);
  auto calls = fake.CallsTo("/api/settle/query");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].method == "GET");
  CHECK(calls[0].query.at("gid") == "a b&c");
}

TEST_CASE("both API prefixes reach the real coordinator", "[sdk][client][process]") {
  RealCoordinator coordinator;
  for (const std::string prefix : {"/api/settle", "/api/dtmsvr", "/api/dtmsvr/"}) {
    CAPTURE(prefix);
    auto client = MakeClient(coordinator.Url(prefix));
    CHECK(client->NewGid().ok());
  }
}

TEST_CASE("calls go to the server URL's base path", "[sdk][client]") {
  ParticipantServer fake;
  fake.Script("/api/dtmsvr/newGid", {{200, R"({"gid":"g-from-fake","dtm_result":"SUCCESS"})"}});
  auto dtm = MakeClient(fake.Url("/api/dtmsvr"));
  auto gid = dtm->NewGid();
  REQUIRE(gid.ok());
  CHECK(*gid == "g-from-fake");

  auto settle = MakeClient(fake.Url("/api/settle/"));
  REQUIRE(settle->Post("/prepare", R"({"gid":"g1","trans_type":"tcc"})").ok());
  REQUIRE(settle->Post("submit", R"({"gid":"g1","trans_type":"tcc"})").ok());

  auto calls = fake.Calls();
  REQUIRE(calls.size() == 3);
  CHECK(calls[0].method == "GET");
  CHECK(calls[0].path == "/api/dtmsvr/newGid");
  CHECK(calls[1].method == "POST");
  CHECK(calls[1].path == "/api/settle/prepare");
  CHECK(calls[1].body == R"({"gid":"g1","trans_type":"tcc"})");
  CHECK(calls[1].headers.at("Content-Type") == "application/json");
  CHECK(calls[2].path == "/api/settle/submit");
}

TEST_CASE("Post maps the coordinator's answers to statuses carrying its message", "[sdk][client]") {
  ParticipantServer fake;
  auto client = MakeClient(fake.Url("/api/settle"));
  auto post = [&](ScriptedAnswer answer) {
    fake.Script("/api/settle/prepare", {std::move(answer)});
    return client->Post("prepare", R"({"gid":"g1","trans_type":"tcc"})");
  };

  auto ok = post({200, R"({"dtm_result":"SUCCESS"})"});
  REQUIRE(ok.ok());
  CHECK(*ok == R"({"dtm_result":"SUCCESS"})");

  auto bad = post({400, R"({"message":"gid: required"})"});
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message() == "gid: required");

  auto conflict = post({409, R"({"dtm_result":"FAILURE","message":"gid g1 is failed"})"});
  CHECK(conflict.status().code() == StatusCode::kConflict);
  CHECK(conflict.status().message() == "gid g1 is failed");

  auto pending = post({425, R"({"dtm_result":"ONGOING","message":"gid g1 is submitted"})"});
  CHECK(pending.status().code() == StatusCode::kPending);
  CHECK(pending.status().message() == "gid g1 is submitted");

  auto old_dtm_failure = post({200, R"({"dtm_result":"FAILURE","message":"no"})"});
  CHECK(old_dtm_failure.status().code() == StatusCode::kConflict);
  CHECK(old_dtm_failure.status().message() == "no");

  auto unauthorized = post({401, R"({"message":"missing bearer token"})"});
  CHECK(unauthorized.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(unauthorized.status().message(),
             Catch::Contains("credentials") && Catch::Contains("missing bearer token"));

  auto internal = post({500, R"({"message":"internal error: boom"})"});
  CHECK(internal.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(internal.status().message(),
             Catch::Contains("prepare") && Catch::Contains("500") && Catch::Contains("boom"));

  auto storage = post({503, R"({"message":"storage unavailable"})"});
  CHECK(storage.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(storage.status().message(), Catch::Contains("503"));

  auto teapot = post({418, "not json"});
  CHECK(teapot.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(teapot.status().message(), Catch::Contains("418") && Catch::Contains("not json"));
}

// docs/protocol.md §6.4: a verdict is read by §4.2's rule, the one the coordinator applies to
// participants, so FAILURE or ONGOING anywhere in a verdict's body counts, whatever the status.
TEST_CASE("Post reads the coordinator's verdicts by the protocol's one classification",
          "[sdk][client]") {
  ParticipantServer fake;
  auto client = MakeClient(fake.Url("/api/settle"));
  auto post = [&](ScriptedAnswer answer) {
    fake.Script("/api/settle/submit", {std::move(answer)});
    return client->Post("submit", R"({"gid":"g1","trans_type":"tcc"})");
  };
  const struct {
    ScriptedAnswer answer;
    StatusCode expected;
  } rows[] = {
      {{200, R"({"result":{"dtm_result":"FAILURE"}})"}, StatusCode::kConflict},
      {{200, R"({"note":"ONGOING"})"}, StatusCode::kPending},
      {{503, R"({"dtm_result":"FAILURE","message":"no"})"}, StatusCode::kConflict},
      {{500, R"({"message":"ONGOING"})"}, StatusCode::kPending},
      {{409, R"({"dtm_result":"FAILURE","message":"reason: ONGOING"})"}, StatusCode::kPending},
      {{201, R"({"dtm_result":"SUCCESS"})"}, StatusCode::kUnavailable},
  };
  for (const auto& row : rows) {
    CAPTURE(row.answer.status, row.answer.body);
    auto result = post(row.answer);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == row.expected);
  }
}

TEST_CASE("the bodies of newGid and query are data, not verdicts", "[sdk][client]") {
  ParticipantServer fake;
  const json query = {
      {"transaction",
       {{"gid", "g1"},
        {"trans_type", "saga"},
        {"status", "aborting"},
        {"rollback_reason", "step 0 action failed: FAILURE: HTTP 409"}}},
      {"branches", json::array({json{{"branch_id", "01"},
                                     {"op", "action"},
                                     {"status", "failed"},
                                     {"url", "http://p/a"},
                                     {"last_error", "FAILURE: HTTP 409: ONGOING"}}})}};
  fake.Script("/api/settle/query", {{200, query.dump()}});
  fake.Script("/api/settle/newGid", {{200, R"({"gid":"ONGOINGFAILURE","dtm_result":"SUCCESS"})"}});
  auto client = MakeClient(fake.Url("/api/settle"));
  auto info = client->Query("g1");
  REQUIRE(info.ok());
  REQUIRE(info->has_value());
  CHECK((*info)->branches.at(0).last_error == "FAILURE: HTTP 409: ONGOING");
  auto gid = client->NewGid();
  REQUIRE(gid.ok());
  CHECK(*gid == "ONGOINGFAILURE");
}

TEST_CASE("a coordinator that cannot be reached is Unavailable", "[sdk][client]") {
  int port = 0;
  {
    ParticipantServer gone;
    port = gone.port();
  }
  auto client = MakeClient("http://127.0.0.1:" + std::to_string(port) + "/api/settle");
  auto gid = client->NewGid();
  REQUIRE_FALSE(gid.ok());
  CHECK(gid.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(gid.status().message(), Catch::Contains("newGid"));

  auto post = client->Post("prepare", R"({"gid":"g1","trans_type":"tcc"})");
  CHECK(post.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(post.status().message(), Catch::Contains("prepare"));
}

TEST_CASE("a coordinator slower than the timeout is Unavailable", "[sdk][client]") {
  ParticipantServer fake;
  fake.SetDefault("/api/settle/prepare",
                  {200, R"({"dtm_result":"SUCCESS"})", std::chrono::milliseconds(3000)});
  ClientOptions options;
  options.timeout = std::chrono::milliseconds(200);
  auto client = MakeClient(fake.Url("/api/settle"), options);
  auto post = client->Post("prepare", R"({"gid":"g1","trans_type":"tcc"})");
  REQUIRE_FALSE(post.ok());
  CHECK(post.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(post.status().message(), Catch::Contains("prepare") && Catch::Contains("timed out"));
  // A timeout is not retried: the coordinator got the request and is merely slow.
  CHECK(fake.CountCalls("/api/settle/prepare") == 1);
}

TEST_CASE("a wait_result call may take longer than the timeout", "[sdk][client]") {
  ParticipantServer fake;
  fake.SetDefault("/api/settle/submit",
                  {200, R"({"dtm_result":"SUCCESS"})", std::chrono::milliseconds(600)});
  ClientOptions options;
  options.timeout = std::chrono::milliseconds(200);
  auto client = MakeClient(fake.Url("/api/settle"), options);
  CHECK(client->Post("submit", R"({"gid":"g1","trans_type":"tcc","wait_result":true})").ok());
}

TEST_CASE("the client's headers go to the coordinator, not to Try URLs", "[sdk][client]") {
  ParticipantServer participant;
  ParticipantServer fake;
  ClientOptions options;
  options.headers["Authorization"] = "Bearer s3cret";
  options.headers["X-Tenant"] = "t1";
  auto client = MakeClient(fake.Url("/api/settle"), options);
  REQUIRE(client->Post("prepare", R"({"gid":"g1","trans_type":"tcc"})").ok());
  fake.Script("/api/settle/newGid", {{200, R"({"gid":"g2"})"}});
  REQUIRE(client->NewGid().ok());
  for (const auto& call : fake.Calls()) {
    CAPTURE(call.path);
    CHECK(call.headers.at("Authorization") == "Bearer s3cret");
    CHECK(call.headers.at("X-Tenant") == "t1");
  }
  REQUIRE(client->CallUrl(participant.Url("/Try"), "", std::chrono::seconds(5)).ok());
  auto calls = participant.CallsTo("/Try");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].headers.count("Authorization") == 0);
}

TEST_CASE("CallUrl sends GET without a body and POST with a JSON body", "[sdk][client]") {
  ParticipantServer participant;
  participant.Script("/Try", {{200, R"({"dtm_result":"SUCCESS"})"},
                              {409, R"({"dtm_result":"FAILURE","message":"no money"})"}});
  auto client = MakeClient("http://127.0.0.1:1/api/settle");

  auto get = client->CallUrl(participant.Url("/Try?x=1&y=a+b"), "", std::chrono::seconds(5));
  REQUIRE(get.ok());
  CHECK(get->status == 200);
  CHECK(get->body == R"({"dtm_result":"SUCCESS"})");

  auto post =
      client->CallUrl(participant.Url("/Try"), R"({"amount": 30})", std::chrono::seconds(5));
  REQUIRE(post.ok());
  CHECK(post->status == 409);
  CHECK(post->body == R"({"dtm_result":"FAILURE","message":"no money"})");

  auto calls = participant.CallsTo("/Try");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].method == "GET");
  CHECK(calls[0].body.empty());
  CHECK(calls[0].query.at("x") == "1");
  CHECK(calls[0].query.at("y") == "a b");  // the '+' went out as written
  CHECK(calls[1].method == "POST");
  CHECK(calls[1].body == R"({"amount": 30})");
  CHECK(calls[1].headers.at("Content-Type") == "application/json");
}

TEST_CASE("CallUrl reaches a participant on 127.0.0.1 through localhost", "[sdk][client]") {
  ParticipantServer participant;
  auto client = MakeClient("http://127.0.0.1:1/api/settle");
  auto answer = client->CallUrl("http://localhost:" + std::to_string(participant.port()) + "/Try",
                                "{}", std::chrono::seconds(5));
  REQUIRE(answer.ok());
  CHECK(answer->status == 200);
  CHECK(participant.CountCalls("/Try") == 1);
}

TEST_CASE("CallUrl is Unavailable on a timeout and InvalidArgument for a bad URL",
          "[sdk][client]") {
  ParticipantServer participant;
  participant.SetDefault("/Slow", {200, "{}", std::chrono::milliseconds(3000)});
  auto client = MakeClient("http://127.0.0.1:1/api/settle");

  auto slow = client->CallUrl(participant.Url("/Slow"), "{}", std::chrono::milliseconds(200));
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(slow.status().message(), Catch::Contains("timed out"));

  auto bad = client->CallUrl("ftp://127.0.0.1/Try", "", std::chrono::seconds(1));
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("calls from many threads share the client safely", "[sdk][client]") {
  ParticipantServer fake;
  fake.SetHandler("/api/settle/prepare", [](const settle::testing::ReceivedCall& call) {
    // Echo the gid, so that every caller can check it got its own answer.
    return ScriptedAnswer{200, json{{"gid", json::parse(call.body).at("gid")}}.dump()};
  });
  auto client = MakeClient(fake.Url("/api/settle"));
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 50;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        const std::string gid = "g" + std::to_string(t) + "-" + std::to_string(i);
        auto answer = client->Post("prepare", json{{"gid", gid}, {"trans_type", "tcc"}}.dump());
        if (!answer.ok() || json::parse(*answer).at("gid") != gid) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(mismatches == 0);
  CHECK(fake.CountCalls("/api/settle/prepare") == kThreads * kCallsPerThread);
}

}  // namespace
}  // namespace settle::sdk
