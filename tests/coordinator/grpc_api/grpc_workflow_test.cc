// Workflows over gRPC as DTM's Go workflow client calls dtmgimp.Dtm (client/workflow/rpc.go),
// against the settled of this process on a real socket, with a real gRPC workflow service that
// settled resumes through workflow.Workflow/Execute (docs/protocol.md §3.16, §10).
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <string>

#include "dtmgimp.grpc.pb.h"
#include "grpc_participant.h"
#include "in_process_settled.h"
#include "settle/core/base64.h"

namespace settle {
namespace {

using google::protobuf::Empty;
using testing::GrpcAnswer;
using testing::GrpcCall;
using testing::GrpcParticipant;
using testing::InProcessSettled;

constexpr const char* kExecute = "/workflow.Workflow/Execute";

void WithGrpc(app::ServerConfig& c) {
  c.grpc.enabled = true;
  c.grpc.port = 0;
}

class WorkflowClient {
 public:
  explicit WorkflowClient(int port)
      : stub_(dtmgimp::Dtm::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                        grpc::InsecureChannelCredentials()))) {}

  // dtmgimp.GetDtmRequest(wf.TransBase): the custom_data Go marshals, the callback in
  // QueryPrepared, TransOptions always present.
  static dtmgimp::DtmRequest Request(const std::string& gid, const std::string& callback,
                                     const std::string& input) {
    dtmgimp::DtmRequest r;
    r.set_gid(gid);
    r.set_transtype("workflow");
    r.set_customeddata(nlohmann::json{{"name", "wf_grpc"}, {"data", Base64Encode(input)}}.dump());
    r.set_queryprepared(callback);
    r.mutable_transoptions();
    return r;
  }

  grpc::Status Progress(const dtmgimp::DtmRequest& request, dtmgimp::DtmProgressesReply& reply) {
    grpc::ClientContext ctx;
    Deadline(ctx);
    return stub_->PrepareWorkflow(&ctx, request, &reply);
  }

  grpc::Status Step(const std::string& gid, const std::string& branch_id, const std::string& op,
                    const std::string& status, const std::string& data) {
    dtmgimp::DtmBranchRequest r;
    r.set_gid(gid);
    r.set_transtype("workflow");
    r.set_branchid(branch_id);
    r.set_busipayload(data);
    (*r.mutable_data())["status"] = status;
    (*r.mutable_data())["op"] = op;
    grpc::ClientContext ctx;
    Deadline(ctx);
    Empty reply;
    return stub_->RegisterBranch(&ctx, r, &reply);
  }

  grpc::Status Submit(dtmgimp::DtmRequest request, const std::string& status,
                      const std::string& result, const std::string& reason = "") {
    (*request.mutable_reqextra())["status"] = status;
    (*request.mutable_reqextra())["rollback_reason"] = reason;
    (*request.mutable_reqextra())["result"] = Base64Encode(result);
    grpc::ClientContext ctx;
    Deadline(ctx);
    Empty reply;
    return stub_->Submit(&ctx, request, &reply);
  }

 private:
  static void Deadline(grpc::ClientContext& ctx) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }
  std::unique_ptr<dtmgimp::Dtm::Stub> stub_;
};

TEST_CASE("a workflow over gRPC: its steps' bytes and its result come back as they were sent",
          "[grpc][workflow]") {
  InProcessSettled s(WithGrpc);
  GrpcParticipant service;
  WorkflowClient client(s.grpc_port());
  const dtmgimp::DtmRequest request =
      WorkflowClient::Request("wg-1", service.Url("workflow.Workflow/Execute"), "in");

  dtmgimp::DtmProgressesReply first;
  REQUIRE(client.Progress(request, first).ok());
  CHECK(first.transaction().gid() == "wg-1");
  CHECK(first.transaction().status() == "prepared");
  CHECK(first.progresses_size() == 0);

  const std::string binary("\x00\xff\xfe\x01", 4);  // not UTF-8: fine over gRPC
  REQUIRE(client.Step("wg-1", "01", "action", "succeed", binary).ok());
  REQUIRE(client.Step("wg-1", "01", "action", "succeed", binary).ok());  // a repeat
  const grpc::Status other = client.Step("wg-1", "01", "action", "succeed", "other");
  CHECK(other.error_code() == grpc::StatusCode::ABORTED);  // 409's status (docs/protocol.md §10)

  dtmgimp::DtmProgressesReply second;
  REQUIRE(client.Progress(request, second).ok());
  REQUIRE(second.progresses_size() == 1);
  CHECK(second.progresses(0).branchid() == "01");
  CHECK(second.progresses(0).op() == "action");
  CHECK(second.progresses(0).status() == "succeed");
  CHECK(second.progresses(0).bindata() == binary);

  REQUIRE(client.Submit(request, "succeed", binary).ok());
  dtmgimp::DtmProgressesReply ended;
  REQUIRE(client.Progress(request, ended).ok());
  CHECK(ended.transaction().status() == "succeed");
  // DTM's gRPC answer drops the result; settled's carries it, in base64 as the client sent it.
  CHECK(ended.transaction().result() == Base64Encode(binary));
  CHECK(s.StatusOf("wg-1") == "succeed");
}

TEST_CASE("bad workflow input over gRPC is INVALID_ARGUMENT naming the field", "[grpc][workflow]") {
  InProcessSettled s(WithGrpc);
  GrpcParticipant service;
  WorkflowClient client(s.grpc_port());
  dtmgimp::DtmRequest nameless =
      WorkflowClient::Request("wg-bad", service.Url("workflow.Workflow/Execute"), "");
  nameless.set_customeddata(R"({"data":null})");
  dtmgimp::DtmProgressesReply reply;
  const grpc::Status no_name = client.Progress(nameless, reply);
  CHECK(no_name.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(no_name.error_message(), Catch::StartsWith("CustomedData.name"));

  const dtmgimp::DtmRequest request =
      WorkflowClient::Request("wg-2", service.Url("workflow.Workflow/Execute"), "");
  REQUIRE(client.Progress(request, reply).ok());
  const grpc::Status op = client.Step("wg-2", "01", "cancel", "succeed", "");
  CHECK(op.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(op.error_message(), Catch::StartsWith("Data.op: "));
  const grpc::Status status = client.Step("wg-2", "01", "action", "maybe", "");
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  const grpc::Status end = client.Submit(request, "aborting", "");
  CHECK(end.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(end.error_message(), Catch::StartsWith("ReqExtra.status"));
  CHECK(s.StatusOf("wg-2") == "prepared");
}

TEST_CASE("settled resumes a gRPC workflow through workflow.Workflow/Execute until it submits",
          "[grpc][workflow]") {
  InProcessSettled s(WithGrpc);
  GrpcParticipant service;
  // Ongoing (FAILED_PRECONDITION), then a failure it did not submit (ABORTED): asked again.
  service.Script(kExecute, {GrpcAnswer{9, "ongoing"}, GrpcAnswer{10, "failure"}});
  WorkflowClient client(s.grpc_port());
  const std::string input = "transfer 30";
  const dtmgimp::DtmRequest request =
      WorkflowClient::Request("wg-3", service.Url("workflow.Workflow/Execute"), input);
  dtmgimp::DtmProgressesReply reply;
  REQUIRE(client.Progress(request, reply).ok());

  REQUIRE(service.WaitForCalls(kExecute, 3));
  const GrpcCall call = service.CallsTo(kExecute).at(0);
  CHECK(call.body == std::string("\x0a\x0b", 2) + input);  // WorkflowData{data: input}
  CHECK(call.Meta("dtm-gid") == "wg-3");
  CHECK(call.Meta("dtm-trans_type") == "workflow");
  CHECK(call.Meta("dtm-branch_id") == "00");
  CHECK(call.Meta("dtm-op") == "wf_grpc");
  CHECK(s.StatusOf("wg-3") == "prepared");

  REQUIRE(client.Submit(request, "failed", "", "card declined").ok());
  CHECK(s.StatusOf("wg-3") == "failed");
  REQUIRE(client.Progress(request, reply).ok());
  CHECK(reply.transaction().status() == "failed");
  CHECK(reply.transaction().rollbackreason() == "card declined");
}

}  // namespace
}  // namespace settle
