// Workflows (settle/sdk/workflow.h) on the gRPC link: prepareWorkflow, the step records (Data's
// op and status, the bytes as BusiPayload) and the final submit (ReqExtra) over DTM's gRPC API,
// against the settle of this process.
#include <catch2/catch.hpp>

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <string>
#include <vector>

#include "eventually.h"
#include "in_process_settled.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/grpc_client.h"
#include "settle/sdk/workflow.h"

namespace settle::sdk {
namespace {

using testing::InProcessSettled;

// What the two steps did, across runs.
struct Steps {
  int first = 0;
  int second = 0;
  int second_unavailable = 0;  // runs whose second step errs before it answers
  bool refuse = false;         // the second step's business says no
  int rolled_back = 0;
};

// Two local steps whose outputs are bytes that are not text.
asio::awaitable<Result<std::string>> TwoSteps(Steps* steps, Workflow& wf, std::string input) {
  WorkflowStep first;
  first.name = "first";
  first.action = [steps](const BranchRequest&) -> Result<std::string> {
    ++steps->first;
    return std::string("a\0\xff", 3);
  };
  first.on_rollback = [steps](const BranchRequest&) {
    ++steps->rolled_back;
    return Status::Ok();
  };
  Result<std::string> a = co_await wf.Do(first);
  if (!a) co_return a.status();
  WorkflowStep second;
  second.name = "second";
  second.action = [steps](const BranchRequest&) -> Result<std::string> {
    ++steps->second;
    if (steps->second_unavailable > 0) {
      --steps->second_unavailable;
      return Status::Unavailable("down");
    }
    if (steps->refuse) return Status::Conflict("refused over gRPC");
    return std::string("b");
  };
  Result<std::string> b = co_await wf.Do(second);
  if (!b) co_return b.status();
  co_return *a + *b + input;
}

struct GrpcWorkflows {
  // `resume_url` is not called within a test's minute unless `retry_interval` is shorter.
  explicit GrpcWorkflows(std::string resume_url = "http://127.0.0.1:1/resume",
                         std::chrono::seconds retry_interval = std::chrono::seconds(60))
      : settled([](app::ServerConfig& c) { c.grpc.enabled = true; }), client([this] {
          GrpcClientOptions options;
          options.http_server =
              "http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle";
          auto made = GrpcClient::Create("grpc://127.0.0.1:" + std::to_string(settled.grpc_port()),
                                         options);
          REQUIRE(made);
          return std::move(*made);
        }()) {
    WorkflowsOptions options;
    options.resume_url = std::move(resume_url);
    options.options.retry_interval = retry_interval;
    workflows = std::make_unique<Workflows>(*client, options);
    REQUIRE(workflows
                ->Register("grpc-order",
                           [steps = &steps](Workflow& wf, std::string input) {
                             return TwoSteps(steps, wf, std::move(input));
                           })
                .ok());
  }
  InProcessSettled settled;
  std::unique_ptr<GrpcClient> client;
  Steps steps;
  std::unique_ptr<Workflows> workflows;
};

TEST_CASE("a workflow over the gRPC link records each step once and reads its bytes back",
          "[sdk][grpc][workflow]") {
  GrpcWorkflows w;
  w.steps.second_unavailable = 1;
  const Result<std::string> stopped = w.workflows->Execute("grpc-order", "gw-1", "in");
  CHECK(stopped.status().code() == StatusCode::kUnavailable);
  const Result<std::string> done = w.workflows->Execute("grpc-order", "gw-1", "in");
  REQUIRE(done);
  CHECK(*done == std::string("a\0\xff"
                             "b"
                             "in",
                             6));
  CHECK(w.steps.first == 1);
  CHECK(w.steps.second == 2);
  // Ended: the result again, from the coordinator.
  const Result<std::string> again = w.workflows->Execute("grpc-order", "gw-1", "in");
  REQUIRE(again);
  CHECK(*again == *done);
  CHECK(w.steps.first == 1);
  auto tx = w.client->Query("gw-1");
  REQUIRE(tx);
  REQUIRE(tx->has_value());
  CHECK((*tx)->status == GlobalStatus::kSucceed);
}

TEST_CASE("a workflow over the gRPC link fails with its step's reason, rolled back",
          "[sdk][grpc][workflow]") {
  GrpcWorkflows w;
  w.steps.refuse = true;
  const Result<std::string> failed = w.workflows->Execute("grpc-order", "gw-2", "in");
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK(failed.status().message() == "refused over gRPC");
  CHECK(w.steps.rolled_back == 1);
  const Result<std::string> again = w.workflows->Execute("grpc-order", "gw-2", "in");
  CHECK(again.status().message() == "refused over gRPC");
  CHECK(w.steps.rolled_back == 1);
  // The gid taken by this workflow's input: another input is the caller's mistake, not a
  // workflow that failed.
  const Result<std::string> other = w.workflows->Execute("grpc-order", "gw-2", "other input");
  CHECK(other.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a workflow stopped mid-way is resumed over gRPC by GrpcBranchServer::OnResume",
          "[sdk][grpc][workflow]") {
  // The resume method first, the workflows (which name it) after.
  GrpcBranchServer server;
  std::unique_ptr<Workflows>* late = nullptr;
  server.OnResume("/workflow.Workflow/Execute",
                  [&late](const ResumeRequest& resume) { return (*late)->Resumer()(resume); });
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  GrpcWorkflows w("127.0.0.1:" + std::to_string(*port) + "/workflow.Workflow/Execute",
                  std::chrono::seconds(1));
  late = &w.workflows;
  w.steps.second_unavailable = 1;
  const Result<std::string> stopped = w.workflows->Execute("grpc-order", "gw-3", "in");
  CHECK(stopped.status().code() == StatusCode::kUnavailable);
  // settled calls the method with WorkflowData{data: "in"} a retry interval later.
  CHECK(settle::testing::Eventually(
      [&] {
        auto tx = w.client->Query("gw-3");
        return tx && tx->has_value() && (*tx)->status == GlobalStatus::kSucceed;
      },
      std::chrono::seconds(15)));
  CHECK(w.steps.first == 1);
  CHECK(w.steps.second == 2);
  const Result<std::string> result = w.workflows->Execute("grpc-order", "gw-3", "in");
  REQUIRE(result);
  CHECK(*result == std::string("a\0\xff"
                               "b"
                               "in",
                               6));
  server.Stop();
}

TEST_CASE("a gRPC call to the resume method that is no resume is refused before the handler",
          "[sdk][grpc][workflow]") {
  GrpcBranchServer server;
  std::mutex mutex;
  std::vector<std::string> inputs;
  server.OnResume("/workflow.Workflow/Execute", [&](const ResumeRequest& resume) {
    std::lock_guard lock(mutex);
    inputs.push_back(resume.name + ":" + resume.input);
    return BranchReply::Success();
  });
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(*port), grpc::InsecureChannelCredentials());
  auto call = [&](const std::string& trans_type, const std::string& op, std::string message) {
    grpc_unary::UnaryRequest request{.method = "/workflow.Workflow/Execute",
                                     .message = std::move(message),
                                     .timeout = std::chrono::seconds(10)};
    grpc_unary::AddBranchMetadata(
        request.metadata, {.gid = "gw-9", .trans_type = trans_type, .branch_id = "00", .op = op});
    return grpc_unary::CallUnary(channel, std::move(request));
  };
  using Code = grpc::StatusCode;
  const auto as_op = call("workflow", "confirm", "");
  CHECK(as_op.code == static_cast<int>(Code::ABORTED));
  CHECK_THAT(as_op.message, Catch::Contains("dtm-op: names a branch op"));
  CHECK(call("saga", "order", "").code == static_cast<int>(Code::ABORTED));
  // Not WorkflowData: a length past the end, another field, a varint cut short.
  for (const std::string& bad : {std::string("\x0a\x05"
                                             "ab",
                                             4),
                                 std::string("\x12\x01"
                                             "a",
                                             3),
                                 std::string("\x0a\x80", 2)}) {
    const auto refused = call("workflow", "order", bad);
    CHECK(refused.code == static_cast<int>(Code::INVALID_ARGUMENT));
    CHECK_THAT(refused.message, Catch::Contains("WorkflowData"));
  }
  {
    std::lock_guard lock(mutex);
    CHECK(inputs.empty());
  }
  const auto resumed = call("workflow", "order",
                            std::string("\x0a\x03"
                                        "a\0b",
                                        5));
  CHECK(resumed.code == 0);
  CHECK(resumed.response.empty());
  CHECK(call("workflow", "order", "").code == 0);  // no input: an empty message
  std::lock_guard lock(mutex);
  CHECK(inputs == std::vector<std::string>{std::string("order:a\0b", 9), "order:"});
}

}  // namespace
}  // namespace settle::sdk
