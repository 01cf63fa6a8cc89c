#include "settle/sdk/saga.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
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
using settle::testing::ReceivedCall;
using settle::testing::ScriptedAnswer;
using settle::testing::SettledProcess;
using settle::testing::TempDir;
using namespace settle::sdk::test;

Saga& AddTransfer(Saga& saga, const ParticipantServer& p) {
  return saga.Add(p.Url("/TransOut"), p.Url("/TransOutCompensate"), kOutBody)
      .Add(p.Url("/TransIn"), p.Url("/TransInCompensate"), kInBody);
}

// The paths `p` received, in arrival order.
std::vector<std::string> Paths(const ParticipantServer& p) {
  std::vector<std::string> paths;
  for (const auto& call : p.Calls()) paths.push_back(call.path);
  return paths;
}

TEST_CASE("Saga::ToJson has the shape DTM's SDKs send", "[sdk][saga]") {
  auto client = MakeClient("http://127.0.0.1:1/api/settle");

  SECTION("steps and payloads, no options") {
    Saga saga(*client, "s1");
    saga.Add("http://p/TransOut", "http://p/TransOutCompensate", kOutBody)
        .Add("http://p/Notify", "", "");
    CHECK(json::parse(saga.ToJson()) ==
          json{{"gid", "s1"},
               {"trans_type", "saga"},
               {"steps",
                {{{"action", "http://p/TransOut"}, {"compensate", "http://p/TransOutCompensate"}},
                 {{"action", "http://p/Notify"}, {"compensate", ""}}}},
               {"payloads", {kOutBody, ""}}});
  }

  SECTION("every option set") {
    Saga saga(*client, "s2");
    TransOptions options;
    options.wait_result = true;
    options.timeout_to_fail = std::chrono::seconds(30);
    options.request_timeout = std::chrono::seconds(5);
    options.retry_interval = std::chrono::seconds(1);
    options.retry_limit = 4;
    options.branch_headers["Authorization"] = "Bearer b";
    saga.SetOptions(options).Add("http://p/A", "http://p/B", "{}");
    CHECK(json::parse(saga.ToJson()) ==
          json{{"gid", "s2"},
               {"trans_type", "saga"},
               {"steps", {{{"action", "http://p/A"}, {"compensate", "http://p/B"}}}},
               {"payloads", {"{}"}},
               {"wait_result", true},
               {"timeout_to_fail", 30},
               {"request_timeout", 5},
               {"retry_interval", 1},
               {"retry_limit", 4},
               {"branch_headers", {{"Authorization", "Bearer b"}}}});
    saga.options().retry_limit = 0;
    CHECK_FALSE(json::parse(saga.ToJson()).contains("retry_limit"));
  }

  SECTION("concurrent with orders: custom_data is a JSON string keyed by step index") {
    Saga saga(*client, "s3");
    saga.Add("http://p/A", "", "{}").Add("http://p/B", "", "{}").Add("http://p/C", "", "{}");
    saga.AddOrder(2, {0, 1});
    const json body = json::parse(saga.ToJson());
    REQUIRE(body.at("custom_data").is_string());
    CHECK(body.at("custom_data") == R"({"concurrent":true,"orders":{"2":[0,1]}})");
    CHECK(body.size() == 5);  // gid, trans_type, steps, payloads, custom_data
  }

  SECTION("concurrent without orders") {
    Saga saga(*client, "s4");
    saga.Add("http://p/A", "", "{}").EnableConcurrent();
    CHECK(json::parse(saga.ToJson()).at("custom_data") == R"({"concurrent":true,"orders":{}})");
  }
}

TEST_CASE("a saga with wait_result succeeds and its actions run in step order",
          "[sdk][saga][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  Saga saga(*coordinator.client, "saga-ok");
  AddTransfer(saga, p).options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome.ok());
  CHECK(outcome->gid == "saga-ok");
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(outcome->committed());

  CHECK(Paths(p) == std::vector<std::string>{"/TransOut", "/TransIn"});
  CheckBranchCall(p.CallsTo("/TransOut")[0], "saga-ok", TransType::kSaga, "01", "action", kOutBody);
  CheckBranchCall(p.CallsTo("/TransIn")[0], "saga-ok", TransType::kSaga, "02", "action", kInBody);
  CHECK(p.CallsTo("/TransOut")[0].answered_at <= p.CallsTo("/TransIn")[0].received_at);
}

TEST_CASE("a saga without wait_result is submitted and the coordinator runs it",
          "[sdk][saga][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  Saga saga(*coordinator.client, "saga-async");
  auto outcome = AddTransfer(saga, p).Submit();
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  REQUIRE(p.WaitForCalls("/TransIn", 1));
  CHECK(Paths(p) == std::vector<std::string>{"/TransOut", "/TransIn"});
}

TEST_CASE("a failing step with wait_result ends failed and compensates in reverse order",
          "[sdk][saga][process]") {
  ParticipantServer p;
  p.SetDefault("/TransIn", {409, R"({"dtm_result":"FAILURE","message":"account closed"})"});
  RealCoordinator coordinator;
  Saga saga(*coordinator.client, "saga-fails");
  AddTransfer(saga, p).options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK_FALSE(outcome->committed());
  CHECK_FALSE(outcome->reason.empty());
  CHECK_THAT(outcome->reason, Catch::Contains("account closed"));

  CHECK(Paths(p) == std::vector<std::string>{"/TransOut", "/TransIn", "/TransInCompensate",
                                             "/TransOutCompensate"});
  CheckBranchCall(p.CallsTo("/TransInCompensate")[0], "saga-fails", TransType::kSaga, "02",
                  "compensate", kInBody);
  CheckBranchCall(p.CallsTo("/TransOutCompensate")[0], "saga-fails", TransType::kSaga, "01",
                  "compensate", kOutBody);

  auto tx = coordinator.client->Query("saga-fails");
  REQUIRE(tx.ok());
  REQUIRE(tx->has_value());
  CHECK((*tx)->status == GlobalStatus::kFailed);
  CHECK((*tx)->rollback_reason == outcome->reason);
}

TEST_CASE("a concurrent saga runs steps together and AddOrder makes a step wait",
          "[sdk][saga][process]") {
  ParticipantServer p;
  // Steps 0 and 1 each hold their answer until both have arrived (or a while has passed), so
  // that each can tell whether the other ran at the same time.
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  int saw_the_other = 0;
  auto together = [&](const ReceivedCall&) {
    std::unique_lock<std::mutex> lock(mu);
    ++arrived;
    cv.notify_all();
    if (cv.wait_for(lock, std::chrono::seconds(2), [&] { return arrived >= 2; })) {
      ++saw_the_other;
    }
    return ScriptedAnswer{};
  };
  p.SetHandler("/A", together);
  p.SetHandler("/B", together);
  RealCoordinator coordinator;

  Saga saga(*coordinator.client, "saga-concurrent");
  saga.Add(p.Url("/A"), p.Url("/ACompensate"), "{}")
      .Add(p.Url("/B"), p.Url("/BCompensate"), "{}")
      .Add(p.Url("/C"), p.Url("/CCompensate"), "{}")
      .AddOrder(2, {0, 1})
      .options()
      .wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSucceed);
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(saw_the_other == 2);
  }
  const ReceivedCall a = p.CallsTo("/A").at(0);
  const ReceivedCall b = p.CallsTo("/B").at(0);
  const ReceivedCall c = p.CallsTo("/C").at(0);
  CHECK(a.answered_at <= c.received_at);
  CHECK(b.answered_at <= c.received_at);
  CHECK(c.query.at("branch_id") == "03");
}

TEST_CASE("submitting a finished saga again is a Conflict", "[sdk][saga][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  Saga first(*coordinator.client, "saga-twice");
  AddTransfer(first, p).options().wait_result = true;
  auto done = first.Submit();
  REQUIRE(done.ok());
  REQUIRE(done->status == GlobalStatus::kSucceed);

  Saga again(*coordinator.client, "saga-twice");
  auto outcome = AddTransfer(again, p).Submit();
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.status().code() == StatusCode::kConflict);
  CHECK_THAT(outcome.status().message(), Catch::Contains("saga-twice"));
  CHECK(p.CountCalls("/TransOut") == 1);
}

TEST_CASE("an empty saga is refused before anything is sent", "[sdk][saga]") {
  ParticipantServer fake;
  auto client = MakeClient(fake.Url("/api/settle"));
  Saga saga(*client, "s-empty");
  auto outcome = saga.Submit();
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.status().code() == StatusCode::kInvalidArgument);
  CHECK(fake.Calls().empty());
}

TEST_CASE("Saga::Submit maps the coordinator's answers", "[sdk][saga]") {
  ParticipantServer fake;
  auto client = MakeClient(fake.Url("/api/settle"));
  auto submit = [&](bool wait_result, ScriptedAnswer answer) {
    fake.Script("/api/settle/submit", {std::move(answer)});
    Saga saga(*client, "s5");
    saga.Add("http://127.0.0.1:1/A", "", "{}").options().wait_result = wait_result;
    return saga.Submit();
  };

  auto accepted = submit(false, {200, R"({"dtm_result":"SUCCESS"})"});
  REQUIRE(accepted.ok());
  CHECK(accepted->status == GlobalStatus::kSubmitted);
  CHECK(json::parse(fake.CallsTo("/api/settle/submit").at(0).body) ==
        json{{"gid", "s5"},
             {"trans_type", "saga"},
             {"steps", {{{"action", "http://127.0.0.1:1/A"}, {"compensate", ""}}}},
             {"payloads", {"{}"}}});

  auto failed =
      submit(true, {409, R"({"dtm_result":"FAILURE","message":"step 0 action failed: x"})"});
  REQUIRE(failed.ok());
  CHECK(failed->status == GlobalStatus::kFailed);
  CHECK(failed->reason == "step 0 action failed: x");

  auto running = submit(true, {425, R"({"dtm_result":"ONGOING","message":"gid s5 is submitted"})"});
  REQUIRE(running.ok());
  CHECK(running->status == GlobalStatus::kSubmitted);
  CHECK(running->reason == "gid s5 is submitted");

  auto taken = submit(false, {409, R"({"dtm_result":"FAILURE","message":"gid s5 is succeed"})"});
  REQUIRE_FALSE(taken.ok());
  CHECK(taken.status().code() == StatusCode::kConflict);
  CHECK(taken.status().message() == "gid s5 is succeed");

  auto malformed = submit(false, {400, R"({"message":"steps[0].action: required"})"});
  CHECK(malformed.status().code() == StatusCode::kInvalidArgument);

  auto down = submit(true, {503, R"({"message":"storage unavailable"})"});
  CHECK(down.status().code() == StatusCode::kUnavailable);
}

}  // namespace
}  // namespace settle::sdk
