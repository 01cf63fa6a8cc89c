// DTM's gRPC API (docs/protocol.md §10) served by the real settled binary, started as a child
// process with --grpc-port on a port the test chose: every mode driven over that port through
// a stub generated from DTM's proto, to gRPC participants on 127.0.0.1, and each transaction
// read back over the same process's HTTP API. Bad input over the port, and the process serving
// on afterwards and shutting down cleanly.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtmgimp.grpc.pb.h"
#include "eventually.h"
#include "file_text.h"
#include "grpc_participant.h"
#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using google::protobuf::Empty;
using nlohmann::json;
using testing::GrpcCall;
using testing::GrpcParticipant;
using testing::JsonClient;
using testing::SettledProcess;
using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(20);

// Protobuf messages' bytes as a gRPC client's payloads hold them: field 1 = 300 (a byte that
// is not UTF-8 included), and field 1 = 30 with field 2 = the bytes ff 00 01.
const std::string kPb300("\x08\xac\x02", 3);
const std::string kPb30Bytes("\x08\x1e\x12\x03\xff\x00\x01", 7);

// The real settled with its gRPC API on a port of its own, as an operator runs it, and its
// HTTP API to read back what it stored.
struct Settled {
  explicit Settled(TempDir& dir)
      : started(dir.File("settle.db"), {"--retry-interval", "100ms"}, dir.File("settled")),
        process(started.process),
        http(std::make_unique<JsonClient>(process->port())),
        grpc_port(started.grpc_port) {}

  std::string GrpcAddress() const { return "127.0.0.1:" + std::to_string(grpc_port); }

  // What settled's HTTP API says of `gid` (the transaction and its branches).
  json Query(const std::string& gid, const std::string& api = "settle") {
    return http->Get("/api/" + api + "/query?gid=" + gid).json;
  }
  std::string StatusOf(const std::string& gid) {
    const json q = Query(gid);
    if (!q.is_object() || !q["transaction"].is_object()) return "";
    return q["transaction"]["status"].get<std::string>();
  }
  bool WaitForStatus(const std::string& gid, const std::string& status) {
    return testing::Eventually([&] { return StatusOf(gid) == status; }, kWait);
  }

  testing::SettledWithGrpc started;
  std::unique_ptr<SettledProcess>& process;
  std::unique_ptr<JsonClient> http;
  int grpc_port = 0;
};

// DTM's gRPC client as dtmgrpc calls: one channel, a deadline per call.
class DtmClient {
 public:
  explicit DtmClient(const std::string& address)
      : stub_(dtmgimp::Dtm::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

  grpc::Status Prepare(const dtmgimp::DtmRequest& r) { return Call(&Stub::Prepare, r); }
  grpc::Status Submit(const dtmgimp::DtmRequest& r) { return Call(&Stub::Submit, r); }
  grpc::Status Abort(const dtmgimp::DtmRequest& r) { return Call(&Stub::Abort, r); }
  grpc::Status RegisterBranch(const dtmgimp::DtmBranchRequest& r) {
    return Call(&Stub::RegisterBranch, r);
  }
  grpc::Status Subscribe(const std::string& topic, const std::string& url) {
    dtmgimp::DtmTopicRequest r;
    r.set_topic(topic);
    r.set_url(url);
    return Call(&Stub::Subscribe, r);
  }
  std::string NewGid() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kWait);
    dtmgimp::DtmGidReply reply;
    return stub_->NewGid(&ctx, Empty(), &reply).ok() ? reply.gid() : "";
  }

 private:
  using Stub = dtmgimp::Dtm::Stub;
  template <typename Request>
  grpc::Status Call(grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Request&, Empty*),
                    const Request& request) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kWait);
    Empty reply;
    return (stub_.get()->*rpc)(&ctx, request, &reply);
  }

  std::unique_ptr<Stub> stub_;
};

dtmgimp::DtmRequest Request(const std::string& gid, const std::string& trans_type) {
  dtmgimp::DtmRequest r;
  r.set_gid(gid);
  r.set_transtype(trans_type);
  r.mutable_transoptions();  // as dtmgrpc always sends it
  return r;
}

dtmgimp::DtmBranchRequest Branch(const std::string& gid, const std::string& trans_type,
                                 const std::string& branch_id, const std::string& payload) {
  dtmgimp::DtmBranchRequest b;
  b.set_gid(gid);
  b.set_transtype(trans_type);
  b.set_branchid(branch_id);
  b.set_busipayload(payload);
  return b;
}

// One call settled made to a gRPC participant, as DTM makes it; `dtm` is settled's gRPC
// address, which it sends because its port is fixed.
void CheckCall(const GrpcCall& call, const std::string& gid, const std::string& trans_type,
               const std::string& branch_id, const std::string& op, const std::string& body,
               const std::string& dtm) {
  INFO(call.method << " " << gid << " " << branch_id << " " << op);
  CHECK(call.Meta("dtm-gid") == gid);
  CHECK(call.Meta("dtm-trans_type") == trans_type);
  CHECK(call.Meta("dtm-branch_id") == branch_id);
  CHECK(call.Meta("dtm-op") == op);
  CHECK(call.Meta("dtm-dtm") == dtm);
  CHECK(call.body == body);
}

// The transaction settled's HTTP API shows for `gid`: that gid, that type, finished `status`.
void CheckFinished(Settled& settled, const std::string& gid, const std::string& type,
                   const std::string& status) {
  INFO(gid);
  REQUIRE(settled.WaitForStatus(gid, status));
  const json q = settled.Query(gid);
  CHECK(q["transaction"]["gid"] == gid);
  CHECK(q["transaction"]["trans_type"] == type);
  CHECK_FALSE(q["transaction"]["finish_time"].is_null());
  // The same transaction through DTM's door.
  const json dtm = settled.Query(gid, "dtmsvr");
  REQUIRE(dtm["transaction"].is_object());
  CHECK(dtm["transaction"]["status"] == status);
}

TEST_CASE(
    "the real settled serves DTM's gRPC API on its --grpc-port: a saga, a TCC, a message "
    "to a topic and an XA to gRPC participants",
    "[grpc][process]") {
  TempDir dir;
  Settled settled(dir);
  GrpcParticipant bank;
  DtmClient client(settled.GrpcAddress());
  const std::string dtm = settled.GrpcAddress();

  // A saga under a gid from NewGid, waiting for its result.
  const std::string saga_gid = client.NewGid();
  REQUIRE_FALSE(saga_gid.empty());
  dtmgimp::DtmRequest saga = Request(saga_gid, "saga");
  saga.set_steps(json::array({{{"action", bank.Url("bank.Bank/TransOut")},
                               {"compensate", bank.Url("bank.Bank/TransOutRevert")}},
                              {{"action", bank.Url("bank.Bank/TransIn")},
                               {"compensate", bank.Url("bank.Bank/TransInRevert")}}})
                     .dump());
  saga.add_binpayloads(kPb300);
  saga.add_binpayloads(kPb30Bytes);
  saga.mutable_transoptions()->set_waitresult(true);
  const grpc::Status saga_submitted = client.Submit(saga);
  INFO(saga_submitted.error_message());
  REQUIRE(saga_submitted.ok());
  CheckFinished(settled, saga_gid, "saga", "succeed");
  const json saga_rows = settled.Query(saga_gid)["branches"];
  REQUIRE(saga_rows.size() == 4);  // an action and a compensate row per step
  CHECK(saga_rows[0]["url"] == bank.Url("bank.Bank/TransOut"));
  REQUIRE(bank.CountCalls("/bank.Bank/TransOut") == 1);
  REQUIRE(bank.CountCalls("/bank.Bank/TransIn") == 1);
  CheckCall(bank.CallsTo("/bank.Bank/TransOut")[0], saga_gid, "saga", "01", "action", kPb300, dtm);
  CheckCall(bank.CallsTo("/bank.Bank/TransIn")[0], saga_gid, "saga", "02", "action", kPb30Bytes,
            dtm);
  CHECK(bank.CountCalls("/bank.Bank/TransOutRevert") == 0);

  // A TCC: prepared, its branches registered (their Try is the client's), submitted.
  dtmgimp::DtmRequest tcc = Request("p-tcc", "tcc");
  tcc.set_steps("null");
  REQUIRE(client.Prepare(tcc).ok());
  CHECK(settled.StatusOf("p-tcc") == "prepared");
  for (const auto& [id, payload] : {std::pair{"01", kPb300}, std::pair{"02", kPb30Bytes}}) {
    dtmgimp::DtmBranchRequest branch = Branch("p-tcc", "tcc", id, payload);
    (*branch.mutable_data())["confirm"] = bank.Url("bank.Tcc/Confirm" + std::string(id));
    (*branch.mutable_data())["cancel"] = bank.Url("bank.Tcc/Cancel" + std::string(id));
    REQUIRE(client.RegisterBranch(branch).ok());
  }
  tcc.mutable_transoptions()->set_waitresult(true);
  REQUIRE(client.Submit(tcc).ok());
  CheckFinished(settled, "p-tcc", "tcc", "succeed");
  REQUIRE(bank.CountCalls("/bank.Tcc/Confirm01") == 1);
  REQUIRE(bank.CountCalls("/bank.Tcc/Confirm02") == 1);
  CheckCall(bank.CallsTo("/bank.Tcc/Confirm01")[0], "p-tcc", "tcc", "01", "confirm", kPb300, dtm);
  CheckCall(bank.CallsTo("/bank.Tcc/Confirm02")[0], "p-tcc", "tcc", "02", "confirm", kPb30Bytes,
            dtm);
  CHECK(bank.CountCalls("/bank.Tcc/Cancel01") + bank.CountCalls("/bank.Tcc/Cancel02") == 0);

  // A message to a topic's gRPC subscribers: subscribed, prepared, submitted, delivered.
  REQUIRE(client.Subscribe("p-orders", bank.Url("shop.Points/Add")).ok());
  REQUIRE(client.Subscribe("p-orders", bank.Url("shop.Mail/Send")).ok());
  const json topics = settled.http->Get("/api/settle/topics").json["topics"];
  REQUIRE(topics.size() == 1);
  CHECK(topics[0]["subscribers"].size() == 2);
  dtmgimp::DtmRequest msg = Request("p-msg", "msg");
  msg.set_steps(json::array({{{"action", "topic://p-orders"}}}).dump());
  msg.add_binpayloads(kPb30Bytes);
  msg.set_queryprepared(bank.Url("shop.Orders/QueryPrepared"));
  REQUIRE(client.Prepare(msg).ok());
  CHECK(settled.StatusOf("p-msg") == "prepared");
  REQUIRE(client.Submit(msg).ok());
  REQUIRE(bank.WaitForCalls("/shop.Points/Add", 1));
  REQUIRE(bank.WaitForCalls("/shop.Mail/Send", 1));
  CheckFinished(settled, "p-msg", "msg", "succeed");
  // One step, two subscribers: a delivery row each, 01-01 and 01-02 in subscription order.
  CheckCall(bank.CallsTo("/shop.Points/Add")[0], "p-msg", "msg", "01-01", "action", kPb30Bytes,
            dtm);
  CheckCall(bank.CallsTo("/shop.Mail/Send")[0], "p-msg", "msg", "01-02", "action", kPb30Bytes, dtm);
  CHECK(bank.CountCalls("/shop.Points/Add") == 1);
  CHECK(bank.CountCalls("/shop.Mail/Send") == 1);

  // An XA: prepared, its branch registered with its phase-2 url, submitted: committed.
  dtmgimp::DtmRequest xa = Request("p-xa", "xa");
  REQUIRE(client.Prepare(xa).ok());
  dtmgimp::DtmBranchRequest xa_branch = Branch("p-xa", "xa", "01", kPb300);
  (*xa_branch.mutable_data())["url"] = bank.Url("bank.Xa/Phase2");
  REQUIRE(client.RegisterBranch(xa_branch).ok());
  xa.mutable_transoptions()->set_waitresult(true);
  REQUIRE(client.Submit(xa).ok());
  CheckFinished(settled, "p-xa", "xa", "succeed");
  REQUIRE(bank.CountCalls("/bank.Xa/Phase2") == 1);
  const GrpcCall commit = bank.CallsTo("/bank.Xa/Phase2")[0];
  CheckCall(commit, "p-xa", "xa", "01", "commit", kPb300, dtm);
  CHECK(commit.Meta("dtm-phase2_url") == bank.Url("bank.Xa/Phase2"));
}

TEST_CASE(
    "bad input over the real settled's gRPC port is INVALID_ARGUMENT naming the field, and "
    "the process serves on",
    "[grpc][process][bad-input]") {
  TempDir dir;
  Settled settled(dir);
  GrpcParticipant bank;
  DtmClient client(settled.GrpcAddress());
  auto saga = [&](const std::string& gid) {
    dtmgimp::DtmRequest r = Request(gid, "saga");
    r.set_steps(json::array({{{"action", bank.Url("bank.Bank/TransOut")}}}).dump());
    r.add_binpayloads(kPb300);
    r.mutable_transoptions()->set_waitresult(true);
    return r;
  };

  const grpc::Status no_gid = client.Submit(saga(""));
  CHECK(no_gid.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(no_gid.error_message() == "Gid: required");

  dtmgimp::DtmRequest bad_steps = saga("p-bad-steps");
  bad_steps.set_steps("[{\"action\":");  // not JSON
  const grpc::Status refused_steps = client.Submit(bad_steps);
  CHECK(refused_steps.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(refused_steps.error_message(), Catch::StartsWith("Steps: malformed JSON"));

  dtmgimp::DtmRequest bad_payloads = saga("p-bad-payloads");
  bad_payloads.add_binpayloads(kPb30Bytes);
  const grpc::Status refused_payloads = client.Submit(bad_payloads);
  CHECK(refused_payloads.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(refused_payloads.error_message(),
             Catch::StartsWith("BinPayloads: 2 payloads for 1 steps"));

  dtmgimp::DtmBranchRequest no_confirm = Branch("p-bad-tcc", "tcc", "01", kPb300);
  (*no_confirm.mutable_data())["cancel"] = bank.Url("bank.Tcc/Cancel");
  const grpc::Status refused_branch = client.RegisterBranch(no_confirm);
  CHECK(refused_branch.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(refused_branch.error_message(), Catch::StartsWith("Data.confirm:"));

  // Nothing was stored, and nothing was called.
  CHECK(settled.StatusOf("p-bad-steps").empty());
  CHECK(settled.StatusOf("p-bad-payloads").empty());
  CHECK(settled.StatusOf("p-bad-tcc").empty());
  CHECK(bank.CountCalls("/bank.Bank/TransOut") == 0);

  // The same process serves on, over gRPC and HTTP alike.
  CHECK_FALSE(client.NewGid().empty());
  REQUIRE(client.Submit(saga("p-good")).ok());
  CHECK(settled.StatusOf("p-good") == "succeed");
  CHECK(bank.CountCalls("/bank.Bank/TransOut") == 1);
  CHECK(settled.http->Get("/api/ping").status == 200);

  // And it stops cleanly on SIGTERM with its gRPC server running.
  CHECK(settled.process->Terminate() == 0);
}

TEST_CASE(
    "a client's reason with a newline is logged inside its own line, over HTTP and gRPC, and "
    "cannot forge a line or a field",
    "[grpc][process][logs]") {
  TempDir dir;
  Settled settled(dir);
  DtmClient client(settled.GrpcAddress());
  // What an attacker wants in the log: a line of its own that looks like settled's.
  const std::string forged = "\n2026-11-27T00:00:00.000 info FORGED";

  // An abort over HTTP, one over gRPC, and an operator's forceStop, each with a forged reason.
  REQUIRE(
      settled.http->PostJson("/api/settle/prepare", {{"gid", "forge-http"}, {"trans_type", "tcc"}})
          .status == 200);
  REQUIRE(settled.http
              ->PostJson("/api/settle/abort", {{"gid", "forge-http"},
                                               {"trans_type", "tcc"},
                                               {"rollback_reason", "http" + forged + " http"}})
              .status == 200);
  REQUIRE(client.Prepare(Request("forge-grpc", "tcc")).ok());
  dtmgimp::DtmRequest abort = Request("forge-grpc", "tcc");
  abort.set_rollbackreason("grpc" + forged + " grpc\" actor=\"admin");
  REQUIRE(client.Abort(abort).ok());
  REQUIRE(
      settled.http->PostJson("/api/settle/prepare", {{"gid", "forge-stop"}, {"trans_type", "tcc"}})
          .status == 200);
  REQUIRE(settled.http
              ->PostJson("/api/settle/forceStop",
                         {{"gid", "forge-stop"}, {"reason", "stop" + forged + " stop\r\x01"}})
              .status == 200);
  for (const char* gid : {"forge-http", "forge-grpc", "forge-stop"}) {
    REQUIRE(settled.WaitForStatus(gid, "failed"));
  }
  // The reasons are stored as sent: only the log escapes them.
  CHECK(settled.Query("forge-http")["transaction"]["rollback_reason"] == "http" + forged + " http");

  const std::string log_path = settled.process->log_path();
  for (const char* tail :
       {"FORGED http\"", "FORGED grpc\\\" actor=\\\"admin\"", "FORGED stop\\r\\x01\""}) {
    INFO(tail);
    REQUIRE(testing::WaitForFileToContain(
        log_path, tail, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  }
  std::istringstream log(testing::ReadFile(log_path));
  int lines_with_forged = 0;
  for (std::string line; std::getline(log, line);) {
    if (line.find("FORGED") == std::string::npos) continue;
    ++lines_with_forged;
    INFO(line);
    // Each is settled's own line for the transaction, the forged text escaped inside it.
    CHECK_THAT(line, Catch::Contains("gid=forge-"));
    CHECK_THAT(line, Catch::Contains("\\n2026-11-27T00:00:00.000 info FORGED"));
    CHECK_THAT(line, !Catch::StartsWith("2026-11-27T00:00:00.000"));
  }
  CHECK(lines_with_forged >= 3);
}

}  // namespace
}  // namespace settle
