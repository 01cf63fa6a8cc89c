// At call time settled never sends a second value for a protocol key (docs/protocol.md §4.1,
// §10.4): a stored branch whose URL's query names one, or whose headers name one settled or gRPC
// sets itself (a row stored before prepare and submit refused them), is not sent; its outcome is
// an error saying why, retried like any failed call. Real participants count what arrives.
#include <catch2/catch.hpp>
#include <string>

#include "grpc_participant.h"
#include "participant_server.h"
#include "settle/async/io_threads.h"
#include "settle/calls/grpc_branch_caller.h"
#include "sync_branch_caller.h"

namespace settle::calls {
namespace {

using Catch::Matchers::Equals;
using settle::testing::GrpcParticipant;
using settle::testing::ParticipantServer;

engine::BranchCall Confirm(const std::string& url) {
  engine::BranchCall call;
  call.gid = "gid-1";
  call.trans_type = TransType::kTcc;
  call.branch_id = "01";
  call.op = BranchOp::kConfirm;
  call.url = url;
  call.data = R"({"amount":10})";
  call.timeout = Duration(5000);
  return call;
}

TEST_CASE("a stored HTTP branch whose URL's query names a protocol key is not sent",
          "[coordinator][http_branch_caller][protocol_keys]") {
  ParticipantServer bank;
  testing::SyncBranchCaller caller;
  for (const auto& [query, key] : std::vector<std::pair<std::string, std::string>>{
           {"?gid=VICTIM&trans_type=tcc&branch_id=02&op=confirm", "gid"},
           {"?account=2;OP=confirm", "op"},
           {"?tr%61ns_type=saga", "trans_type"},
           {"?dtm=http://evil/", "dtm"}}) {
    INFO(query);
    const engine::BranchOutcome outcome = caller.Call(Confirm(bank.Url("/confirm") + query));
    CHECK(outcome.result == BranchResult::kUnknown);
    CHECK(outcome.http_status == 0);
    CHECK_THAT(outcome.detail, Equals("not sent: the branch URL's query names \"" + key +
                                      "\", which settled sets itself"));
  }
  CHECK(bank.Calls().empty());
  // The participant's own query goes, with settled's keys once each.
  CHECK(caller.Call(Confirm(bank.Url("/confirm?account=2"))).result == BranchResult::kSuccess);
  REQUIRE(bank.Calls().size() == 1);
  CHECK(bank.Calls()[0].query.at("account") == "2");
  CHECK(bank.Calls()[0].query.at("gid") == "gid-1");
}

TEST_CASE("a stored HTTP branch with a header settled sets itself is not sent",
          "[coordinator][http_branch_caller][protocol_keys]") {
  ParticipantServer bank;
  testing::SyncBranchCaller caller;
  for (const char* name : {"Content-Length", "Connection", "Host", "Content-Type", "dtm-gid",
                           "Signature", "X-Forwarded-Host", "settle-x"}) {
    INFO(name);
    engine::BranchCall call = Confirm(bank.Url("/confirm"));
    call.headers = {{"X-Tenant", "acme"}, {name, "3"}};
    const engine::BranchOutcome outcome = caller.Call(call);
    CHECK(outcome.result == BranchResult::kUnknown);
    CHECK_THAT(outcome.detail, Equals(std::string("not sent: branch header ") + name +
                                      " is one settled sets itself"));
  }
  CHECK(bank.Calls().empty());
}

// A GrpcBranchCaller on I/O threads of its own, called from plain test code.
class SyncGrpcCaller {
 public:
  SyncGrpcCaller() : caller_(clock_, {}) { io_.Start(); }
  ~SyncGrpcCaller() { io_.Stop(); }
  engine::BranchOutcome Call(engine::BranchCall call) {
    return asio::co_spawn(io_.context(), caller_.Call(std::move(call)), asio::use_future).get();
  }

 private:
  SystemClock clock_;
  async::IoThreads io_{1};
  GrpcBranchCaller caller_;
};

TEST_CASE("a stored gRPC branch with dtm-* or gRPC's own metadata among its headers is not sent",
          "[coordinator][grpc_branch_caller][protocol_keys]") {
  GrpcParticipant bank;
  SyncGrpcCaller caller;
  for (const char* name :
       {"dtm-gid", "dtm-op", "DTM-Trans_Type", "te", "user-agent", "content-type", "host"}) {
    INFO(name);
    engine::BranchCall call = Confirm(bank.Url("bank.Bank/TransInConfirm"));
    call.headers = {{name, "VICTIM"}};
    const engine::BranchOutcome outcome = caller.Call(call);
    CHECK(outcome.result == BranchResult::kUnknown);
    CHECK_THAT(outcome.detail, Equals(std::string("not sent: branch header ") + name +
                                      " is metadata gRPC or settled sets itself"));
  }
  CHECK(bank.CountCalls("/bank.Bank/TransInConfirm") == 0);
  engine::BranchCall fine = Confirm(bank.Url("bank.Bank/TransInConfirm"));
  fine.headers = {{"x-tenant", "acme"}};
  CHECK(caller.Call(fine).result == BranchResult::kSuccess);
  REQUIRE(bank.CountCalls("/bank.Bank/TransInConfirm") == 1);
  const auto calls = bank.CallsTo("/bank.Bank/TransInConfirm");
  CHECK(calls[0].metadata.count("dtm-gid") == 1);
  CHECK(calls[0].Meta("dtm-gid") == "gid-1");
}

}  // namespace
}  // namespace settle::calls
