#include "settle/sdk/tcc.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

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

// A transfer: TransOut at branch 01, TransIn at branch 02, stopping at the first error.
Status Transfer(Tcc& tcc, const ParticipantServer& p) {
  auto out = tcc.CallBranch(kOutBody, p.Url("/TransOutTry"), p.Url("/TransOutConfirm"),
                            p.Url("/TransOutCancel"));
  if (!out) return out.status();
  auto in = tcc.CallBranch(kInBody, p.Url("/TransInTry"), p.Url("/TransInConfirm"),
                           p.Url("/TransInCancel"));
  if (!in) return in.status();
  return Status::Ok();
}

TEST_CASE("RunTcc registers branches 01 and 02, calls their Try and submits",
          "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  p.Script("/TransOutTry", {{200, R"({"dtm_result":"SUCCESS","hold":"h1"})"}});

  std::string try_answer;
  auto outcome = RunTcc(*coordinator.client, "tcc-ok", {}, [&](Tcc& tcc) {
    CHECK(tcc.gid() == "tcc-ok");
    auto out = tcc.CallBranch(kOutBody, p.Url("/TransOutTry"), p.Url("/TransOutConfirm"),
                              p.Url("/TransOutCancel"));
    if (!out) return out.status();
    try_answer = *out;
    auto in = tcc.CallBranch(kInBody, p.Url("/TransInTry"), p.Url("/TransInConfirm"),
                             p.Url("/TransInCancel"));
    if (!in) return in.status();
    return Status::Ok();
  });
  REQUIRE(outcome.ok());
  CHECK(outcome->gid == "tcc-ok");
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  CHECK(outcome->committed());
  CHECK(try_answer == R"({"dtm_result":"SUCCESS","hold":"h1"})");

  auto out_try = p.CallsTo("/TransOutTry");
  auto in_try = p.CallsTo("/TransInTry");
  REQUIRE(out_try.size() == 1);
  REQUIRE(in_try.size() == 1);
  CheckBranchCall(out_try[0], "tcc-ok", TransType::kTcc, "01", "try", kOutBody);
  CheckBranchCall(in_try[0], "tcc-ok", TransType::kTcc, "02", "try", kInBody);

  REQUIRE(p.WaitForCalls("/TransOutConfirm", 1));
  REQUIRE(p.WaitForCalls("/TransInConfirm", 1));
  CheckBranchCall(p.CallsTo("/TransOutConfirm")[0], "tcc-ok", TransType::kTcc, "01", "confirm",
                  kOutBody);
  CheckBranchCall(p.CallsTo("/TransInConfirm")[0], "tcc-ok", TransType::kTcc, "02", "confirm",
                  kInBody);

  auto tx = WaitForStatus(*coordinator.client, "tcc-ok", GlobalStatus::kSucceed);
  REQUIRE(tx.has_value());
  CHECK(tx->status == GlobalStatus::kSucceed);
  CHECK(tx->branches.size() == 4);
  CHECK(p.CountCalls("/TransOutCancel") == 0);
  CHECK(p.CountCalls("/TransInCancel") == 0);
}

TEST_CASE("RunTcc with wait_result reports succeed once the confirms are done",
          "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  TransOptions options;
  options.wait_result = true;
  auto outcome = RunTcc(*coordinator.client, "tcc-wait-ok", options,
                        [&](Tcc& tcc) { return Transfer(tcc, p); });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(outcome->reason.empty());
  CHECK(p.CountCalls("/TransOutConfirm") == 1);
  CHECK(p.CountCalls("/TransInConfirm") == 1);
  auto tx = coordinator.client->Query("tcc-wait-ok");
  REQUIRE(tx.ok());
  REQUIRE(tx->has_value());
  CHECK((*tx)->status == GlobalStatus::kSucceed);
}

TEST_CASE("a Try answering FAILURE aborts and every registered branch is cancelled",
          "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  p.Script("/TransInTry", {{409, R"({"dtm_result":"FAILURE","message":"account closed"})"}});

  Status in_status;
  auto outcome = RunTcc(*coordinator.client, "tcc-try-fails", {}, [&](Tcc& tcc) {
    in_status = Transfer(tcc, p);
    return in_status;
  });
  REQUIRE(outcome.ok());
  CHECK(in_status.code() == StatusCode::kConflict);
  CHECK(outcome->status == GlobalStatus::kAborting);
  CHECK_FALSE(outcome->committed());
  CHECK_THAT(outcome->reason, Catch::Contains("02") && Catch::Contains("FAILURE") &&
                                  Catch::Contains("account closed"));

  REQUIRE(p.WaitForCalls("/TransOutCancel", 1));
  REQUIRE(p.WaitForCalls("/TransInCancel", 1));
  CheckBranchCall(p.CallsTo("/TransOutCancel")[0], "tcc-try-fails", TransType::kTcc, "01", "cancel",
                  kOutBody);
  CheckBranchCall(p.CallsTo("/TransInCancel")[0], "tcc-try-fails", TransType::kTcc, "02", "cancel",
                  kInBody);
  auto tx = WaitForStatus(*coordinator.client, "tcc-try-fails", GlobalStatus::kFailed);
  REQUIRE(tx.has_value());
  CHECK(tx->status == GlobalStatus::kFailed);
  CHECK(tx->rollback_reason == outcome->reason);
  CHECK(p.CountCalls("/TransOutConfirm") == 0);
  CHECK(p.CountCalls("/TransInConfirm") == 0);
}

TEST_CASE("with wait_result a failed Try ends failed with its reason", "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  p.Script("/TransOutTry", {{409, R"({"dtm_result":"FAILURE","message":"no money"})"}});
  TransOptions options;
  options.wait_result = true;
  auto outcome = RunTcc(*coordinator.client, "tcc-wait-fail", options,
                        [&](Tcc& tcc) { return Transfer(tcc, p); });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK_THAT(outcome->reason, Catch::Contains("01") && Catch::Contains("no money"));
  // The first Try failed, so the second branch was never registered.
  CHECK(p.CountCalls("/TransInTry") == 0);
  CHECK(p.CountCalls("/TransOutCancel") == 1);
  CHECK(p.CountCalls("/TransInCancel") == 0);
}

TEST_CASE("a closure returning an error aborts with its message as the reason",
          "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  auto outcome = RunTcc(*coordinator.client, "tcc-closure-error", {}, [&](Tcc& tcc) {
    auto out = tcc.CallBranch(kOutBody, p.Url("/TransOutTry"), p.Url("/TransOutConfirm"),
                              p.Url("/TransOutCancel"));
    if (!out) return out.status();
    return Status::Conflict("daily limit exceeded");
  });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kAborting);
  CHECK(outcome->reason == "daily limit exceeded");
  REQUIRE(p.WaitForCalls("/TransOutCancel", 1));
  auto tx = WaitForStatus(*coordinator.client, "tcc-closure-error", GlobalStatus::kFailed);
  REQUIRE(tx.has_value());
  CHECK(tx->status == GlobalStatus::kFailed);
  CHECK(tx->rollback_reason == "daily limit exceeded");
}

TEST_CASE("a closure that throws aborts and the exception does not escape", "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  TransOptions options;
  options.wait_result = true;
  Result<Outcome> outcome = Status::Internal("not run");
  REQUIRE_NOTHROW(outcome = RunTcc(*coordinator.client, "tcc-throws", options, [&](Tcc& tcc) {
                    auto out = tcc.CallBranch(kOutBody, p.Url("/TransOutTry"),
                                              p.Url("/TransOutConfirm"), p.Url("/TransOutCancel"));
                    if (out) throw std::runtime_error("parsing the Try answer failed");
                    return out.status();
                  }));
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK_THAT(outcome->reason, Catch::Contains("parsing the Try answer failed"));
  CHECK(p.CountCalls("/TransOutCancel") == 1);

  Result<Outcome> other = Status::Internal("not run");
  REQUIRE_NOTHROW(other = RunTcc(*coordinator.client, "tcc-throws-int", options,
                                 [](Tcc&) -> Status { throw 42; }));
  REQUIRE(other.ok());
  CHECK(other->status == GlobalStatus::kFailed);
  CHECK_FALSE(other->reason.empty());
}

TEST_CASE("a Try slower than request_timeout aborts", "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  p.SetDefault("/TransInTry", {200, R"({"dtm_result":"SUCCESS"})", std::chrono::seconds(10)});
  TransOptions options;
  options.wait_result = true;
  options.request_timeout = std::chrono::seconds(1);
  Status in_status;
  auto outcome = RunTcc(*coordinator.client, "tcc-try-timeout", options, [&](Tcc& tcc) {
    in_status = Transfer(tcc, p);
    return in_status;
  });
  REQUIRE(outcome.ok());
  CHECK(in_status.code() == StatusCode::kUnavailable);
  CHECK_THAT(in_status.message(), Catch::Contains("02") && Catch::Contains("timed out"));
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK(p.CountCalls("/TransOutCancel") == 1);
  CHECK(p.CountCalls("/TransInCancel") == 1);
  CHECK(p.CountCalls("/TransInTry") == 1);  // not sent again
}

TEST_CASE("a refused prepare is an error and nothing else happens", "[sdk][tcc][process]") {
  ParticipantServer p;
  RealCoordinator coordinator;
  bool ran = false;
  auto outcome = RunTcc(*coordinator.client, "not a valid gid!", {}, [&](Tcc& tcc) {
    ran = true;
    return Transfer(tcc, p);
  });
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(outcome.status().message(), Catch::Contains("gid"));
  CHECK_FALSE(ran);
  CHECK(p.Calls().empty());
}

// The remaining cases check exact requests against a fake coordinator.

struct FakeCoordinator {
  ParticipantServer server;
  std::unique_ptr<Client> client = MakeClient(server.Url("/api/settle"));

  std::vector<std::string> Paths() const {
    std::vector<std::string> paths;
    for (const auto& call : server.Calls()) paths.push_back(call.path);
    return paths;
  }
  json Body(const std::string& route, std::size_t index = 0) const {
    auto calls = server.CallsTo("/api/settle/" + route);
    REQUIRE(calls.size() > index);
    return json::parse(calls[index].body);
  }
};

TEST_CASE("RunTcc sends prepare with every option set, registerBranch and submit", "[sdk][tcc]") {
  ParticipantServer p;
  FakeCoordinator fake;
  TransOptions options;
  options.wait_result = true;
  options.timeout_to_fail = std::chrono::seconds(60);
  options.request_timeout = std::chrono::seconds(5);
  options.retry_interval = std::chrono::seconds(2);
  options.retry_limit = 3;
  options.branch_headers["Authorization"] = "Bearer b";
  auto outcome = RunTcc(*fake.client, "g1", options, [&](Tcc& tcc) { return Transfer(tcc, p); });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSucceed);

  CHECK(fake.Paths() ==
        std::vector<std::string>{"/api/settle/prepare", "/api/settle/registerBranch",
                                 "/api/settle/registerBranch", "/api/settle/submit"});
  CHECK(fake.Body("prepare") == json{{"gid", "g1"},
                                     {"trans_type", "tcc"},
                                     {"wait_result", true},
                                     {"timeout_to_fail", 60},
                                     {"request_timeout", 5},
                                     {"retry_interval", 2},
                                     {"retry_limit", 3},
                                     {"branch_headers", {{"Authorization", "Bearer b"}}}});
  // The Try's URL too, for settled's countersignature of it (docs/protocol.md §4.9).
  CHECK(fake.Body("registerBranch", 0) == json{{"gid", "g1"},
                                               {"trans_type", "tcc"},
                                               {"branch_id", "01"},
                                               {"data", kOutBody},
                                               {"try", p.Url("/TransOutTry")},
                                               {"confirm", p.Url("/TransOutConfirm")},
                                               {"cancel", p.Url("/TransOutCancel")}});
  CHECK(fake.Body("registerBranch", 1).at("branch_id") == "02");
  CHECK(fake.Body("registerBranch", 1).at("data") == kInBody);
  CHECK(fake.Body("submit") == json{{"gid", "g1"}, {"trans_type", "tcc"}, {"wait_result", true}});

  // The Try carries the branch headers, as the coordinator's calls do.
  CHECK(p.CallsTo("/TransOutTry")[0].headers.at("Authorization") == "Bearer b");

  // Each Try came after its registration.
  auto calls = fake.server.CallsTo("/api/settle/registerBranch");
  CHECK(calls[0].answered_at <= p.CallsTo("/TransOutTry")[0].received_at);
  CHECK(calls[1].answered_at <= p.CallsTo("/TransInTry")[0].received_at);
}

TEST_CASE("RunTcc without options sends only gid and trans_type", "[sdk][tcc]") {
  FakeCoordinator fake;
  auto outcome = RunTcc(*fake.client, "g2", {}, [](Tcc&) { return Status::Ok(); });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  CHECK(fake.Body("prepare") == json{{"gid", "g2"}, {"trans_type", "tcc"}});
  CHECK(fake.Body("submit") == json{{"gid", "g2"}, {"trans_type", "tcc"}});
}

TEST_CASE("a Try in an empty-body branch is a GET with the query of op=try", "[sdk][tcc]") {
  ParticipantServer p;
  FakeCoordinator fake;
  auto outcome = RunTcc(*fake.client, "g3", {}, [&](Tcc& tcc) {
    auto answer = tcc.CallBranch("", p.Url("/Try?tenant=t1"), p.Url("/Confirm"), p.Url("/Cancel"));
    return answer ? Status::Ok() : answer.status();
  });
  REQUIRE(outcome.ok());
  auto calls = p.CallsTo("/Try");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].method == "GET");
  CHECK(calls[0].query == std::map<std::string, std::string>{{"tenant", "t1"},
                                                             {"gid", "g3"},
                                                             {"trans_type", "tcc"},
                                                             {"branch_id", "01"},
                                                             {"op", "try"}});
}

TEST_CASE("a Try URL whose query names a protocol key is refused before anything is registered",
          "[sdk][tcc][protocol_keys]") {
  ParticipantServer p;
  FakeCoordinator fake;
  auto outcome = RunTcc(*fake.client, "g4", {}, [&](Tcc& tcc) {
    auto answer =
        tcc.CallBranch("{}", p.Url("/Try?GID=victim"), p.Url("/Confirm"), p.Url("/Cancel"));
    return answer ? Status::Ok() : answer.status();
  });
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->committed());  // aborted, with the reason
  CHECK_THAT(outcome->reason,
             Catch::Contains("names \"gid\" in its query, which the protocol sets itself"));
  CHECK(fake.server.CallsTo("/api/settle/registerBranch").empty());
  CHECK(p.Calls().empty());
}

TEST_CASE("a Try answering ONGOING or an error aborts", "[sdk][tcc]") {
  for (const ScriptedAnswer& answer :
       {ScriptedAnswer{425, R"({"dtm_result":"ONGOING"})"}, ScriptedAnswer{500, "oops"},
        ScriptedAnswer{200, R"({"dtm_result":"ONGOING"})"}}) {
    CAPTURE(answer.status, answer.body);
    ParticipantServer p;
    FakeCoordinator fake;
    p.Script("/TransOutTry", {answer});
    Status try_status;
    auto outcome = RunTcc(*fake.client, "g4", {}, [&](Tcc& tcc) {
      try_status = Transfer(tcc, p);
      return try_status;
    });
    REQUIRE(outcome.ok());
    CHECK(try_status.code() == StatusCode::kUnavailable);
    CHECK(outcome->status == GlobalStatus::kAborting);
    CHECK(fake.Paths() == std::vector<std::string>{"/api/settle/prepare",
                                                   "/api/settle/registerBranch",
                                                   "/api/settle/abort"});
    CHECK(fake.Body("abort") ==
          json{{"gid", "g4"}, {"trans_type", "tcc"}, {"rollback_reason", try_status.message()}});
  }
}

TEST_CASE("a long rollback reason is cut to fit the coordinator's limit", "[sdk][tcc]") {
  FakeCoordinator fake;
  // Multi-byte characters, so that a cut in the middle of one would show.
  std::string long_reason = "x";
  while (long_reason.size() < 5000) long_reason += "é";
  auto outcome =
      RunTcc(*fake.client, "g5", {}, [&](Tcc&) { return Status::Conflict(long_reason); });
  REQUIRE(outcome.ok());
  const std::string sent = fake.Body("abort").at("rollback_reason");
  CHECK(sent.size() == 999);  // byte 1000 would cut an "é" in two
  CHECK(long_reason.compare(0, sent.size(), sent) == 0);
  CHECK(outcome->reason == sent);
}

TEST_CASE("Try URL and registration errors stop the branch before its Try", "[sdk][tcc]") {
  ParticipantServer p;
  FakeCoordinator fake;
  fake.server.Script("/api/settle/registerBranch",
                     {{409, R"({"dtm_result":"FAILURE","message":"gid g6 is aborting"})"}});
  Status bad_url;
  Status refused;
  auto outcome = RunTcc(*fake.client, "g6", {}, [&](Tcc& tcc) {
    bad_url = tcc.CallBranch("{}", "ftp://p/Try", p.Url("/Confirm"), p.Url("/Cancel")).status();
    refused = tcc.CallBranch("{}", p.Url("/Try"), p.Url("/Confirm"), p.Url("/Cancel")).status();
    return refused;
  });
  REQUIRE(outcome.ok());
  CHECK(bad_url.code() == StatusCode::kInvalidArgument);
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::Contains("gid g6 is aborting"));
  CHECK(p.Calls().empty());
  CHECK(fake.server.CountCalls("/api/settle/registerBranch") == 1);
  CHECK(outcome->status == GlobalStatus::kAborting);
}

TEST_CASE("RunTcc maps the answers to submit and abort", "[sdk][tcc]") {
  TransOptions wait;
  wait.wait_result = true;
  auto ok_body = [](Tcc&) { return Status::Ok(); };
  auto failing_body = [](Tcc&) { return Status::Conflict("no"); };

  SECTION("submit with wait_result answered 409: failed with the coordinator's reason") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/submit",
                       {{409, R"({"dtm_result":"FAILURE","message":"branch 01 confirm: x"})"}});
    auto outcome = RunTcc(*fake.client, "g7", wait, ok_body);
    REQUIRE(outcome.ok());
    CHECK(outcome->status == GlobalStatus::kFailed);
    CHECK(outcome->reason == "branch 01 confirm: x");
  }
  SECTION("submit with wait_result answered 425: still submitted, with why") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/submit",
                       {{425, R"({"dtm_result":"ONGOING","message":"gid g7 is submitted"})"}});
    auto outcome = RunTcc(*fake.client, "g7", wait, ok_body);
    REQUIRE(outcome.ok());
    CHECK(outcome->status == GlobalStatus::kSubmitted);
    CHECK(outcome->reason == "gid g7 is submitted");
  }
  SECTION("submit refused without wait_result: a Conflict error") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/submit",
                       {{409, R"({"dtm_result":"FAILURE","message":"gid g7 is aborting"})"}});
    auto outcome = RunTcc(*fake.client, "g7", {}, ok_body);
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.status().code() == StatusCode::kConflict);
  }
  SECTION("submit not delivered: Unavailable") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/submit", {{503, R"({"message":"storage unavailable"})"}});
    auto outcome = RunTcc(*fake.client, "g7", {}, ok_body);
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.status().code() == StatusCode::kUnavailable);
  }
  SECTION("abort with wait_result answered 409: failed") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/abort", {{409, R"({"dtm_result":"FAILURE","message":"no"})"}});
    auto outcome = RunTcc(*fake.client, "g7", wait, failing_body);
    REQUIRE(outcome.ok());
    CHECK(outcome->status == GlobalStatus::kFailed);
    CHECK(outcome->reason == "no");
    CHECK(fake.Body("abort") == json{{"gid", "g7"},
                                     {"trans_type", "tcc"},
                                     {"rollback_reason", "no"},
                                     {"wait_result", true}});
  }
  SECTION("abort with wait_result answered 425: aborting") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/abort",
                       {{425, R"({"dtm_result":"ONGOING","message":"gid g7 is aborting"})"}});
    auto outcome = RunTcc(*fake.client, "g7", wait, failing_body);
    REQUIRE(outcome.ok());
    CHECK(outcome->status == GlobalStatus::kAborting);
    CHECK(outcome->reason == "no");
  }
  SECTION("abort not delivered: Unavailable") {
    FakeCoordinator fake;
    fake.server.Script("/api/settle/abort", {{500, R"({"message":"bug"})"}});
    auto outcome = RunTcc(*fake.client, "g7", {}, failing_body);
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.status().code() == StatusCode::kUnavailable);
  }
}

}  // namespace
}  // namespace settle::sdk
