// The XA initiator against a fake coordinator (a scripted server that records every call) and
// fake participants: the requests RunXa makes, in order, and what a failing branch does.
#include "settle/sdk/xa.h"
#include "settle/sdk/xa_request.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "participant_server.h"
#include "sdk_test_support.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using namespace settle::sdk::test;

// The coordinator's routes RunXa called, in order, with their JSON bodies.
std::vector<std::pair<std::string, json>> CoordinatorCalls(const ParticipantServer& coordinator) {
  std::vector<std::pair<std::string, json>> calls;
  for (const ReceivedCall& call : coordinator.Calls()) {
    calls.emplace_back(call.path, json::parse(call.body));
  }
  return calls;
}

void CheckActionCall(const ReceivedCall& call, const std::string& gid, const std::string& branch_id,
                     const std::string& phase2_url, const std::string& body) {
  CHECK(call.method == "POST");
  CHECK(call.query.at("gid") == gid);
  CHECK(call.query.at("trans_type") == "xa");
  CHECK(call.query.at("branch_id") == branch_id);
  CHECK(call.query.at("op") == "action");
  CHECK(call.query.at("phase2_url") == phase2_url);
  CHECK(call.body == body);
}

TEST_CASE(
    "RunXa prepares, calls branches 01 and 02 with op=action and their phase2_url, and "
    "submits",
    "[sdk][xa]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));
  p.Script("/TransOutXa", {{200, R"({"dtm_result":"SUCCESS","note":"out"})"}});

  std::string out_answer;
  TransOptions options;
  options.timeout_to_fail = std::chrono::seconds(30);
  auto outcome = RunXa(*client, "xa-ok", options, [&](Xa& xa) {
    CHECK(xa.gid() == "xa-ok");
    auto out = xa.CallBranch(kOutBody, p.Url("/TransOutXa"));
    if (!out) return out.status();
    out_answer = *out;
    auto in = xa.CallBranch(kInBody, p.Url("/TransInXa"), p.Url("/TransInPhase2"));
    return in ? Status::Ok() : in.status();
  });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  CHECK(out_answer == R"({"dtm_result":"SUCCESS","note":"out"})");

  auto calls = CoordinatorCalls(coordinator);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].first == "/api/settle/prepare");
  CHECK(calls[0].second == json({{"gid", "xa-ok"}, {"trans_type", "xa"}, {"timeout_to_fail", 30}}));
  CHECK(calls[1].first == "/api/settle/submit");
  CHECK(calls[1].second == json({{"gid", "xa-ok"}, {"trans_type", "xa"}}));

  REQUIRE(p.CountCalls("/TransOutXa") == 1);
  REQUIRE(p.CountCalls("/TransInXa") == 1);
  // One URL serves both phases unless the caller names another.
  CheckActionCall(p.CallsTo("/TransOutXa")[0], "xa-ok", "01", p.Url("/TransOutXa"), kOutBody);
  CheckActionCall(p.CallsTo("/TransInXa")[0], "xa-ok", "02", p.Url("/TransInPhase2"), kInBody);
  // Branches were called in order: 02 only after 01 answered.
  CHECK(p.CallsTo("/TransOutXa")[0].answered_at <= p.CallsTo("/TransInXa")[0].received_at);
}

TEST_CASE("a branch answering FAILURE stops the XA body and RunXa aborts with its reason",
          "[sdk][xa]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));
  p.Script("/TransInXa", {{409, R"({"dtm_result":"FAILURE","message":"account closed"})"}});

  Status in_status;
  auto outcome = RunXa(*client, "xa-fails", {}, [&](Xa& xa) {
    auto out = xa.CallBranch(kOutBody, p.Url("/TransOutXa"));
    if (!out) return out.status();
    auto in = xa.CallBranch(kInBody, p.Url("/TransInXa"));
    in_status = in.status();
    if (!in) return in.status();
    return Status::Ok();
  });
  REQUIRE(outcome.ok());
  CHECK(in_status.code() == StatusCode::kConflict);
  CHECK(outcome->status == GlobalStatus::kAborting);
  CHECK_FALSE(outcome->committed());
  CHECK_THAT(outcome->reason, Catch::Contains("branch 02 action") && Catch::Contains("FAILURE") &&
                                  Catch::Contains("account closed"));

  auto calls = CoordinatorCalls(coordinator);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].first == "/api/settle/prepare");
  CHECK(calls[1].first == "/api/settle/abort");
  CHECK(calls[1].second.at("gid") == "xa-fails");
  CHECK(calls[1].second.at("trans_type") == "xa");
  CHECK(calls[1].second.at("rollback_reason") == outcome->reason);
}

TEST_CASE("an XA body that throws, or names a bad URL, aborts without calling anything more",
          "[sdk][xa]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));

  Status bad_url;
  auto outcome = RunXa(*client, "xa-bad-url", {}, [&](Xa& xa) {
    auto called = xa.CallBranch(kOutBody, "ftp://p/TransOutXa");
    bad_url = called.status();
    return called.status();
  });
  REQUIRE(outcome.ok());
  CHECK(bad_url.code() == StatusCode::kInvalidArgument);
  CHECK(outcome->status == GlobalStatus::kAborting);

  auto thrown = RunXa(*client, "xa-throws", {},
                      [&](Xa&) -> Status { throw std::runtime_error("no route to the bank"); });
  REQUIRE(thrown.ok());
  CHECK(thrown->status == GlobalStatus::kAborting);
  CHECK_THAT(thrown->reason, Catch::Contains("no route to the bank"));
  CHECK(p.Calls().empty());
  auto calls = CoordinatorCalls(coordinator);
  REQUIRE(calls.size() == 4);
  CHECK(calls[1].first == "/api/settle/abort");
  CHECK(calls[3].first == "/api/settle/abort");
}

TEST_CASE("RunXa reports a refused prepare and runs nothing", "[sdk][xa]") {
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));
  coordinator.Script("/api/settle/prepare",
                     {{400, R"({"message":"trans_type: unsupported trans_type \"xa\""})"}});
  bool ran = false;
  auto outcome = RunXa(*client, "xa-refused", {}, [&](Xa&) {
    ran = true;
    return Status::Ok();
  });
  CHECK(outcome.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(outcome.status().message(), Catch::Contains("unsupported trans_type"));
  CHECK_FALSE(ran);
  CHECK(coordinator.Calls().size() == 1);
}

TEST_CASE("an XA branch URL's query is read with the field named when it is wrong", "[sdk][xa]") {
  const std::multimap<std::string, std::string> good = {{"gid", "g1"},
                                                        {"trans_type", "xa"},
                                                        {"branch_id", "01"},
                                                        {"op", "action"},
                                                        {"phase2_url", "http://p:8081/api/Xa"}};
  XaRequest request;
  REQUIRE(ParseXaQuery(good, request).ok());
  CHECK(request.gid == "g1");
  CHECK(request.branch_id == "01");
  CHECK(request.op == XaOp::kAction);
  CHECK(request.phase2_url == "http://p:8081/api/Xa");

  auto without = [&](const std::string& name, const std::string& value = "") {
    auto params = good;
    params.erase(name);
    if (!value.empty()) params.emplace(name, value);
    XaRequest r;
    return ParseXaQuery(params, r);
  };
  CHECK(without("phase2_url").message() == "phase2_url: required in the query string");
  CHECK_THAT(without("phase2_url", "not a url").message(), Catch::StartsWith("phase2_url: "));
  CHECK(without("gid", "g 1").message() == "gid: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  CHECK(without("gid").message() == "gid: required in the query string");
  CHECK(without("trans_type", "tcc").message() == "trans_type: this URL takes xa");
  CHECK(without("branch_id").message() == "branch_id: required in the query string");
  CHECK(without("op", "confirm").message() == "op: expected action, commit or rollback");

  // Phase 2 needs no phase2_url.
  auto commit = good;
  commit.erase("phase2_url");
  commit.find("op")->second = "rollback";
  XaRequest r;
  REQUIRE(ParseXaQuery(commit, r).ok());
  CHECK(r.op == XaOp::kRollback);
  CHECK(r.phase2_url.empty());
}

}  // namespace
}  // namespace settle::sdk
