// The protocol's keys belong to settled, over DTM's gRPC API too (docs/protocol.md §3.7, §4.1,
// §10.4): a request whose branch URL's query names one, or whose BranchHeaders name dtm-* or a
// field settled or gRPC sets itself, is INVALID_ARGUMENT naming the field in DTM's names and the
// key; nothing is stored and no participant, HTTP or gRPC, is called.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <string>

#include "dtmgimp.grpc.pb.h"
#include "grpc_participant.h"
#include "in_process_settled.h"
#include "participant_server.h"
#include "store_as_before.h"
#include "temp_dir.h"

namespace settle {
namespace {

using google::protobuf::Empty;
using testing::GrpcParticipant;
using testing::InProcessSettled;
using testing::ParticipantServer;

constexpr const char* kVictimQuery = "?gid=VICTIM&trans_type=tcc&branch_id=02&op=confirm";

void WithGrpc(app::ServerConfig& c) {
  c.grpc.enabled = true;
  c.grpc.port = 0;
}

std::string KeyMessage(const std::string& field, const std::string& key) {
  return field + ": the query names \"" + key + "\", which settled sets itself (protocol.md §4.1)";
}

class Dtm {
 public:
  explicit Dtm(int port)
      : stub_(dtmgimp::Dtm::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                        grpc::InsecureChannelCredentials()))) {}

  grpc::Status Submit(const dtmgimp::DtmRequest& r) {
    return Call([&](grpc::ClientContext* c, Empty* e) { return stub_->Submit(c, r, e); });
  }
  grpc::Status Prepare(const dtmgimp::DtmRequest& r) {
    return Call([&](grpc::ClientContext* c, Empty* e) { return stub_->Prepare(c, r, e); });
  }
  grpc::Status RegisterBranch(const dtmgimp::DtmBranchRequest& r) {
    return Call([&](grpc::ClientContext* c, Empty* e) { return stub_->RegisterBranch(c, r, e); });
  }
  grpc::Status Subscribe(const std::string& topic, const std::string& url) {
    dtmgimp::DtmTopicRequest r;
    r.set_topic(topic);
    r.set_url(url);
    return Call([&](grpc::ClientContext* c, Empty* e) { return stub_->Subscribe(c, r, e); });
  }

 private:
  template <typename Rpc>
  grpc::Status Call(Rpc rpc) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    Empty reply;
    return rpc(&ctx, &reply);
  }

  std::unique_ptr<dtmgimp::Dtm::Stub> stub_;
};

dtmgimp::DtmRequest Saga(const std::string& gid, const std::string& action,
                         const std::string& compensate) {
  dtmgimp::DtmRequest r;
  r.set_gid(gid);
  r.set_transtype("saga");
  r.set_steps(nlohmann::json({{{"action", action}, {"compensate", compensate}}}).dump());
  r.add_binpayloads(R"({"amount":10})");
  r.mutable_transoptions();
  return r;
}

bool NothingStored(InProcessSettled& s, const std::string& gid) {
  const nlohmann::json q = s.Query(gid);
  return q.is_object() && q["transaction"].is_null();
}

TEST_CASE("over gRPC, a saga whose step URL names a protocol key is INVALID_ARGUMENT, not stored",
          "[grpc][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s(WithGrpc);
  Dtm dtm(s.grpc_port());
  grpc::Status r =
      dtm.Submit(Saga("evil-1", bank.Url("/api/TransInConfirm") + kVictimQuery, bank.Url("/undo")));
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("Steps[0].action", "gid"));
  r = dtm.Submit(Saga("evil-2", bank.Url("/in"), bank.Url("/undo?x=1;Op=cancel")));
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("Steps[0].compensate", "op"));
  CHECK(NothingStored(s, "evil-1"));
  CHECK(NothingStored(s, "evil-2"));
  CHECK(bank.Calls().empty());
}

TEST_CASE("over gRPC, a message's QueryPrepared or step that names a protocol key is refused",
          "[grpc][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s(WithGrpc);
  Dtm dtm(s.grpc_port());
  dtmgimp::DtmRequest msg;
  msg.set_gid("m-1");
  msg.set_transtype("msg");
  msg.set_steps(nlohmann::json({{{"action", bank.Url("/in")}}}).dump());
  msg.add_binpayloads("{}");
  msg.set_queryprepared(bank.Url("/qp?gid=VICTIM"));
  grpc::Status r = dtm.Prepare(msg);
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("QueryPrepared", "gid"));
  msg.set_queryprepared(bank.Url("/qp"));
  msg.set_steps(nlohmann::json({{{"action", bank.Url("/in?branch_id=7")}}}).dump());
  r = dtm.Submit(msg);
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("Steps[0].action", "branch_id"));
  CHECK(NothingStored(s, "m-1"));
  CHECK(bank.Calls().empty());
}

TEST_CASE("over gRPC, a TCC or XA branch whose URL names a protocol key is not registered",
          "[grpc][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s(WithGrpc);
  Dtm dtm(s.grpc_port());
  dtmgimp::DtmRequest tcc;
  tcc.set_gid("t-1");
  tcc.set_transtype("tcc");
  REQUIRE(dtm.Prepare(tcc).ok());
  dtmgimp::DtmBranchRequest branch;
  branch.set_gid("t-1");
  branch.set_transtype("tcc");
  branch.set_branchid("01");
  branch.set_busipayload(R"({"amount":10})");
  (*branch.mutable_data())["confirm"] = bank.Url("/api/TransInConfirm") + kVictimQuery;
  (*branch.mutable_data())["cancel"] = bank.Url("/cancel");
  grpc::Status r = dtm.RegisterBranch(branch);
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("Data.confirm", "gid"));
  CHECK(s.Query("t-1")["branches"].empty());

  dtmgimp::DtmRequest xa;
  xa.set_gid("x-1");
  xa.set_transtype("xa");
  REQUIRE(dtm.Prepare(xa).ok());
  dtmgimp::DtmBranchRequest xa_branch;
  xa_branch.set_gid("x-1");
  xa_branch.set_transtype("xa");
  xa_branch.set_branchid("01");
  (*xa_branch.mutable_data())["url"] = bank.Url("/xa?TRANS_TYPE=xa");
  r = dtm.RegisterBranch(xa_branch);
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("Data.url", "trans_type"));
  CHECK(s.Query("x-1")["branches"].empty());
  CHECK(bank.Calls().empty());
}

TEST_CASE("over gRPC, a subscriber URL that names a protocol key is refused",
          "[grpc][protocol_keys]") {
  InProcessSettled s(WithGrpc);
  Dtm dtm(s.grpc_port());
  const grpc::Status r = dtm.Subscribe("orders", "http://127.0.0.1:9/in?op=confirm");
  CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(r.error_message() == KeyMessage("URL", "op"));
  CHECK(s.client().Get("/api/settle/topics").json["topics"].empty());
}

TEST_CASE("over gRPC, BranchHeaders naming dtm-* are refused for gRPC and HTTP participants alike",
          "[grpc][protocol_keys]") {
  GrpcParticipant grpc_bank;
  ParticipantServer http_bank;
  InProcessSettled s(WithGrpc);
  Dtm dtm(s.grpc_port());
  // The attack of issue 42 over gRPC: the client's dtm-* metadata before settled's own.
  for (const std::string& action :
       {grpc_bank.Url("bank.Bank/TransInConfirm"), http_bank.Url("/api/TransInConfirm")}) {
    INFO(action);
    dtmgimp::DtmRequest saga = Saga("evil-h", action, "");
    auto& headers = *saga.mutable_transoptions()->mutable_branchheaders();
    headers["dtm-gid"] = "VICTIM";
    headers["dtm-op"] = "confirm";
    const grpc::Status r = dtm.Submit(saga);
    CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(r.error_message() ==
          "TransOptions.BranchHeaders.dtm-gid: a header settled sets itself; a transaction may "
          "not set it (protocol.md §3.7)");
  }
  // Names that only gRPC sets itself are refused when a participant is a gRPC one.
  for (const std::string name : {"te", "user-agent"}) {
    INFO(name);
    dtmgimp::DtmRequest saga = Saga("evil-g", grpc_bank.Url("bank.Bank/TransIn"), "");
    (*saga.mutable_transoptions()->mutable_branchheaders())[name] = "x";
    const grpc::Status r = dtm.Submit(saga);
    CHECK(r.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(r.error_message(), Catch::StartsWith("TransOptions.BranchHeaders." + name +
                                                    ": metadata gRPC or settled sets itself"));
  }
  dtmgimp::DtmRequest tcc;
  tcc.set_gid("evil-t");
  tcc.set_transtype("tcc");
  (*tcc.mutable_transoptions()->mutable_branchheaders())["Host"] = "other-bank:80";
  CHECK(dtm.Prepare(tcc).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  for (const char* gid : {"evil-h", "evil-g", "evil-t"}) CHECK(NothingStored(s, gid));
  CHECK(grpc_bank.CountCalls("/bank.Bank/TransInConfirm") == 0);
  CHECK(grpc_bank.CountCalls("/bank.Bank/TransIn") == 0);
  CHECK(http_bank.Calls().empty());
}

TEST_CASE(
    "a saga stored before the check with dtm-* branch headers is not sent to its gRPC "
    "participant: its call fails saying why, is retried and flagged stuck",
    "[grpc][protocol_keys][upgrade]") {
  GrpcParticipant bank;
  testing::TempDir dir;
  const std::string db = dir.File("settle.db");
  engine::SubmitRequest saga{.gid = "old-g", .trans_type = TransType::kSaga};
  saga.steps = {{bank.Url("bank.Bank/TransInConfirm"), ""}};
  saga.payloads = {R"({"amount":10})"};
  saga.options.branch_headers = {{"dtm-gid", "VICTIM"}, {"dtm-op", "confirm"}};
  testing::StoreAsBefore(db, saga);

  InProcessSettled s([&](app::ServerConfig& c) {
    WithGrpc(c);
    c.db_path = db;
  });
  REQUIRE(s.WaitUntil("old-g", [](const nlohmann::json& q) {
    return q.is_object() && q["transaction"].is_object() && q["transaction"]["stuck"] == true;
  }));
  for (const nlohmann::json& branch : s.Query("old-g")["branches"]) {
    if (branch["op"] != "action") continue;
    CHECK(branch["failures"].get<int>() >= 3);
    CHECK(branch["last_error"] ==
          "UNKNOWN: not sent: branch header dtm-gid is metadata gRPC or settled sets itself");
  }
  CHECK(bank.CountCalls("/bank.Bank/TransInConfirm") == 0);
}

}  // namespace
}  // namespace settle
