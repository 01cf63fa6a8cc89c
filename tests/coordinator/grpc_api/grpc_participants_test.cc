// settled calls participants that serve gRPC methods (docs/protocol.md §10.4), as DTM does:
// the stored bytes are the request message, DTM's dtm-* metadata and the branch headers go
// along, and the status code is the answer. Real gRPC participants on 127.0.0.1, the settled
// of this process, transactions started over HTTP and over gRPC.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <string>

#include "dtmgimp.grpc.pb.h"
#include "grpc_participant.h"
#include "in_process_settled.h"
#include "participant_server.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::GrpcAnswer;
using testing::GrpcParticipant;
using testing::InProcessSettled;

// A protobuf message's bytes, as a gRPC client's payload holds them: field 1 = 30.
const std::string kAmount30("\x08\x1e", 2);

json Saga(const std::string& gid, std::vector<std::pair<std::string, std::string>> steps,
          const std::string& payload) {
  json body = {
      {"gid", gid}, {"trans_type", "saga"}, {"steps", json::array()}, {"payloads", json::array()}};
  for (const auto& [action, compensate] : steps) {
    body["steps"].push_back({{"action", action}, {"compensate", compensate}});
    body["payloads"].push_back(payload);
  }
  return body;
}

TEST_CASE("a saga's gRPC steps get the stored bytes unchanged, with DTM's metadata",
          "[grpc][calls][saga]") {
  GrpcParticipant bank;
  InProcessSettled s;
  json saga = Saga("g1",
                   {{bank.Url("bank.Bank/TransOut"), bank.Url("bank.Bank/TransOutRevert")},
                    {bank.Url("bank.Bank/TransIn"), bank.Url("bank.Bank/TransInRevert")}},
                   R"({"amount":30})");
  saga["wait_result"] = true;
  saga["branch_headers"] = {{"X-Trace-Id", "t-1"}};
  REQUIRE(s.Call("submit", saga).status == 200);
  CHECK(s.StatusOf("g1") == "succeed");
  const auto out = bank.CallsTo("/bank.Bank/TransOut");
  REQUIRE(out.size() == 1);
  CHECK(out[0].body == R"({"amount":30})");
  CHECK(out[0].Meta("dtm-gid") == "g1");
  CHECK(out[0].Meta("dtm-trans_type") == "saga");
  CHECK(out[0].Meta("dtm-branch_id") == "01");
  CHECK(out[0].Meta("dtm-op") == "action");
  CHECK(out[0].Meta("x-trace-id") == "t-1");  // branch headers, lowercased
  CHECK(bank.CallsTo("/bank.Bank/TransIn").at(0).Meta("dtm-branch_id") == "02");
  CHECK(bank.CountCalls("/bank.Bank/TransOutRevert") == 0);
}

TEST_CASE("ABORTED is a FAILURE that compensates, UNAVAILABLE an error that is retried",
          "[grpc][calls][saga]") {
  GrpcParticipant bank;
  InProcessSettled s;
  bank.Script("/bank.Bank/TransOut", {{14, "starting"}});             // UNAVAILABLE once
  bank.SetDefault("/bank.Bank/TransIn", {10, "insufficient funds"});  // ABORTED
  json saga = Saga("g1",
                   {{bank.Url("bank.Bank/TransOut"), bank.Url("bank.Bank/TransOutRevert")},
                    {bank.Url("bank.Bank/TransIn"), bank.Url("bank.Bank/TransInRevert")}},
                   "{}");
  REQUIRE(s.Call("submit", saga).status == 200);
  REQUIRE(s.WaitForStatus("g1", "failed"));
  CHECK(bank.CountCalls("/bank.Bank/TransOut") == 2);
  CHECK(bank.CountCalls("/bank.Bank/TransIn") == 1);
  CHECK(bank.CountCalls("/bank.Bank/TransOutRevert") == 1);
  const json q = s.Query("g1");
  bool named = false;
  for (const json& b : q["branches"]) {
    if (b["last_error"].get<std::string>().find("gRPC ABORTED: insufficient funds") !=
        std::string::npos) {
      named = true;
    }
  }
  CHECK(named);
  // One gate per scheme, host and port.
  const json hosts = s.client().Get("/api/admin/hosts").json["hosts"];
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0]["host"] == "grpc://127.0.0.1:" + std::to_string(bank.port()));
}

TEST_CASE("one TCC mixes an HTTP branch and a grpc:// branch, confirmed with their bodies",
          "[grpc][calls][tcc]") {
  GrpcParticipant grpc_bank;
  testing::ParticipantServer http_bank;
  InProcessSettled s;
  REQUIRE(s.Call("prepare", {{"gid", "t1"}, {"trans_type", "tcc"}}).status == 200);
  const std::string grpc_base = "grpc://127.0.0.1:" + std::to_string(grpc_bank.port());
  REQUIRE(s.Call("registerBranch", {{"gid", "t1"},
                                    {"trans_type", "tcc"},
                                    {"branch_id", "01"},
                                    {"data", R"({"a":1})"},
                                    {"confirm", grpc_base + "/bank.Bank/Confirm"},
                                    {"cancel", grpc_base + "/bank.Bank/Cancel"}})
              .status == 200);
  REQUIRE(s.Call("registerBranch", {{"gid", "t1"},
                                    {"trans_type", "tcc"},
                                    {"branch_id", "02"},
                                    {"data", R"({"b":2})"},
                                    {"confirm", http_bank.Url("/confirm")},
                                    {"cancel", http_bank.Url("/cancel")}})
              .status == 200);
  REQUIRE(s.Call("submit", {{"gid", "t1"}, {"trans_type", "tcc"}, {"wait_result", true}}).status ==
          200);
  REQUIRE(grpc_bank.CountCalls("/bank.Bank/Confirm") == 1);
  CHECK(grpc_bank.CallsTo("/bank.Bank/Confirm")[0].body == R"({"a":1})");
  CHECK(grpc_bank.CallsTo("/bank.Bank/Confirm")[0].Meta("dtm-op") == "confirm");
  CHECK(http_bank.CallsTo("/confirm").at(0).body == R"({"b":2})");
}

TEST_CASE("a saga from DTM's gRPC client to gRPC participants: protobuf payloads, byte for byte",
          "[grpc][calls][saga]") {
  GrpcParticipant bank;
  InProcessSettled s([](app::ServerConfig& c) {
    c.grpc.enabled = true;
    c.grpc.port = 0;
  });
  auto stub = dtmgimp::Dtm::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(s.grpc_port()), grpc::InsecureChannelCredentials()));
  dtmgimp::DtmRequest saga;
  saga.set_gid("g-pb");
  saga.set_transtype("saga");
  saga.set_steps(json::array({{{"action", bank.Url("bank.Bank/TransOut")},
                               {"compensate", bank.Url("bank.Bank/TransOutRevert")}}})
                     .dump());
  saga.add_binpayloads(kAmount30);
  saga.mutable_transoptions()->set_waitresult(true);
  grpc::ClientContext ctx;
  google::protobuf::Empty reply;
  REQUIRE(stub->Submit(&ctx, saga, &reply).ok());
  CHECK(bank.CallsTo("/bank.Bank/TransOut").at(0).body == kAmount30);
  CHECK(s.StatusOf("g-pb") == "succeed");
}

TEST_CASE("a grpcs:// participant is called over TLS, verified against --ca-file",
          "[grpc][calls][tls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  GrpcParticipant bank(cert.cert_file, cert.key_file);
  InProcessSettled s([&](app::ServerConfig& c) { c.ca_file = ca.ca_file(); });
  const std::string base = "grpcs://localhost:" + std::to_string(bank.port());
  json saga = Saga("g1", {{base + "/bank.Bank/TransOut", ""}}, "{}");
  saga["wait_result"] = true;
  REQUIRE(s.Call("submit", saga).status == 200);
  CHECK(bank.CountCalls("/bank.Bank/TransOut") == 1);
  // Plaintext to a TLS participant is an error, retried, never a success.
  json plain =
      Saga("g2", {{"grpc://localhost:" + std::to_string(bank.port()) + "/bank.Bank/TransOut", ""}},
           "{}");
  REQUIRE(s.Call("submit", plain).status == 200);
  CHECK(s.WaitUntil("g2", [](const json& q) {
    return q["branches"].is_array() && !q["branches"].empty() &&
           q["branches"][0]["attempts"].get<int>() >= 1;
  }));
  CHECK(s.StatusOf("g2") == "submitted");
}

TEST_CASE("a message's back-check and deliveries go to gRPC methods", "[grpc][calls][msg]") {
  GrpcParticipant shop;
  InProcessSettled s;
  // Prepared and left so: at its timeout_to_fail the coordinator asks the back-check, which
  // answers OK (committed), and the message is delivered.
  const json msg = {{"gid", "m1"},
                    {"trans_type", "msg"},
                    {"steps", {{{"action", shop.Url("shop.Points/Add")}}}},
                    {"payloads", {kAmount30}},
                    {"query_prepared", shop.Url("shop.Orders/QueryPrepared")},
                    {"timeout_to_fail", 1}};
  REQUIRE(s.Call("prepare", msg).status == 200);
  REQUIRE(shop.WaitForCalls("/shop.Points/Add", 1));
  const auto check = shop.CallsTo("/shop.Orders/QueryPrepared");
  REQUIRE(check.size() == 1);
  CHECK(check[0].Meta("dtm-op") == "msg");
  CHECK(shop.CallsTo("/shop.Points/Add")[0].body == kAmount30);
  CHECK(s.WaitForStatus("m1", "succeed"));
}

TEST_CASE("an XA's gRPC branch is committed with op commit and its phase2_url",
          "[grpc][calls][xa]") {
  GrpcParticipant db;
  InProcessSettled s;
  REQUIRE(s.Call("prepare", {{"gid", "x1"}, {"trans_type", "xa"}}).status == 200);
  REQUIRE(s.Call("registerBranch", {{"gid", "x1"},
                                    {"trans_type", "xa"},
                                    {"branch_id", "01"},
                                    {"url", db.Url("bank.Xa/Phase2")}})
              .status == 200);
  REQUIRE(s.Call("submit", {{"gid", "x1"}, {"trans_type", "xa"}, {"wait_result", true}}).status ==
          200);
  const auto calls = db.CallsTo("/bank.Xa/Phase2");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].Meta("dtm-op") == "commit");
  CHECK(calls[0].Meta("dtm-trans_type") == "xa");
  CHECK(calls[0].Meta("dtm-phase2_url") == db.Url("bank.Xa/Phase2"));
}

TEST_CASE("a branch header gRPC cannot carry is refused at submit, naming it",
          "[grpc][calls][bad-input]") {
  GrpcParticipant bank;
  InProcessSettled s;
  for (const std::string name : {"X!Mark", "grpc-timeout", "trace-bin"}) {
    INFO(name);
    json saga = Saga("g1", {{bank.Url("bank.Bank/TransOut"), ""}}, "{}");
    saga["branch_headers"] = {{name, "v"}};
    const auto r = s.Call("submit", saga);
    CHECK(r.status == 400);
    CHECK_THAT(r.json["message"].get<std::string>(),
               Catch::StartsWith("branch_headers." + name + ": cannot be sent as gRPC metadata"));
  }
  json high = Saga("g1", {{bank.Url("bank.Bank/TransOut"), ""}}, "{}");
  high["branch_headers"] = {{"X-Name", "caf\u00e9"}};
  CHECK(s.Call("submit", high).status == 400);
  // The same headers are fine for HTTP participants.
  testing::ParticipantServer http;
  json to_http = Saga("g2", {{http.Url("/out"), ""}}, "{}");
  to_http["branch_headers"] = {{"X!Mark", "v"}};
  CHECK(s.Call("submit", to_http).status == 200);
}

TEST_CASE(
    "a TCC's gRPC branch is refused at registration when its prepare's headers cannot "
    "travel as metadata",
    "[grpc][calls][bad-input][tcc]") {
  GrpcParticipant bank;
  InProcessSettled s;
  // Fine headers for HTTP, stored by the prepare; gRPC cannot carry the second.
  REQUIRE(s.Call("prepare", {{"gid", "t1"},
                             {"trans_type", "tcc"},
                             {"branch_headers", {{"x-tenant", "acme"}, {"X!Mark", "v"}}}})
              .status == 200);
  auto branch = [&](const std::string& id, const std::string& confirm, const std::string& cancel) {
    return s.Call("registerBranch", {{"gid", "t1"},
                                     {"trans_type", "tcc"},
                                     {"branch_id", id},
                                     {"data", "{}"},
                                     {"confirm", confirm},
                                     {"cancel", cancel}});
  };
  const auto refused = branch("01", bank.Url("bank.Bank/Confirm"), bank.Url("bank.Bank/Cancel"));
  CHECK(refused.status == 400);
  CHECK_THAT(refused.json["message"].get<std::string>(),
             Catch::StartsWith("branch_headers.X!Mark: cannot be sent as gRPC metadata"));
  CHECK_THAT(refused.json["message"].get<std::string>(),
             Catch::EndsWith("(set by the prepare of gid t1)"));
  // Nothing was registered; an HTTP branch of the same transaction is fine.
  CHECK(s.Query("t1")["branches"].empty());
  testing::ParticipantServer http;
  CHECK(branch("01", http.Url("/confirm"), http.Url("/cancel")).status == 200);
  // An unknown gid is still a 4xx naming it, whatever the URLs.
  const auto unknown = s.Call("registerBranch", {{"gid", "nope"},
                                                 {"trans_type", "tcc"},
                                                 {"branch_id", "01"},
                                                 {"data", "{}"},
                                                 {"confirm", bank.Url("bank.Bank/Confirm")},
                                                 {"cancel", bank.Url("bank.Bank/Cancel")}});
  CHECK(unknown.status >= 400);
  CHECK(unknown.status < 500);
}

TEST_CASE("a gRPC branch URL that names no method is a 400 naming the step",
          "[grpc][calls][bad-input]") {
  InProcessSettled s;
  for (const std::string url :
       {"127.0.0.1:9/NoMethod", "127.0.0.1/bank.Bank/TransOut", "grpc://h:9/bank.Bank/TransOut?x=1",
        "grpc:///bank.Bank/T", "grpcs://h:9/bank.Bank/"}) {
    INFO(url);
    const auto r = s.Call("submit", Saga("g1", {{url, ""}}, "{}"));
    CHECK(r.status == 400);
    CHECK_THAT(r.json["message"].get<std::string>(), Catch::StartsWith("steps[0].action:"));
  }
  CHECK(s.StatusOf("g1").empty());
}

}  // namespace
}  // namespace settle
