// Workflows through the coordinator, as settled assembles it (real SQLite store, driver,
// scheduler), with a fake clock and a scripted resume callback: DTM's four contracts
// (prepareWorkflow, the step log, the final submit, the resume), docs/protocol.md §3.16.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "settle/core/base64.h"
#include "settle/drive/coordinator.h"
#include "settle/engine/workflow_engine.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Failure;
using testing::Ongoing;
using testing::Unknown;

constexpr Duration kSecond{1000};
const std::string kCallback = "http://shop/workflow/resume";

// What DTM's Go client sends: custom_data {"name","data"} with the input in base64.
engine::PrepareRequest PrepareWorkflow(const std::string& gid, const std::string& input = "in",
                                       const std::string& callback = kCallback) {
  engine::PrepareRequest r;
  r.gid = gid;
  r.trans_type = TransType::kWorkflow;
  r.options.custom_data = R"({"name":"transfer","data":")" + Base64Encode(input) + R"("})";
  r.options.workflow_name = "transfer";
  r.options.workflow_input = input;
  r.query_prepared = callback;
  return r;
}

engine::RegisterBranchRequest Step(const std::string& gid, const std::string& branch_id,
                                   const std::string& op, const std::string& status,
                                   const std::string& data) {
  engine::RegisterBranchRequest r;
  r.gid = gid;
  r.trans_type = TransType::kWorkflow;
  r.branch_id = branch_id;
  r.op = op;
  r.status = status;
  r.data = data;
  return r;
}

engine::SubmitRequest Finish(const std::string& gid, const std::string& status,
                             const std::string& result = "", const std::string& reason = "") {
  engine::SubmitRequest r;
  r.gid = gid;
  r.trans_type = TransType::kWorkflow;
  r.req_extra = {{"status", status}, {"rollback_reason", reason}, {"result", Base64Encode(result)}};
  return r;
}

std::vector<std::string> StepsOf(const storage::Transaction& tx) {
  std::vector<std::string> steps;
  for (const storage::BranchRecord* row : engine::StepLogOf(tx)) {
    steps.push_back(row->branch_id + ":" + std::string(ToString(row->op)) + ":" +
                    std::string(ToString(row->status)) + ":" + row->data.str());
  }
  return steps;
}

TEST_CASE("prepareWorkflow stores the workflow prepared and answers its empty step log",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  auto stored = h.coordinator().PrepareWorkflow(PrepareWorkflow("w1"));
  REQUIRE(stored);
  CHECK(stored->global.status == GlobalStatus::kPrepared);
  CHECK(stored->global.options.workflow_name == "transfer");
  CHECK(StepsOf(*stored).empty());
  CHECK(h.StatusOf("w1") == GlobalStatus::kPrepared);
}

TEST_CASE("a recorded step is answered to every later prepareWorkflow, byte for byte",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  const std::string binary("\x00\xff\x01 out", 6);
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", binary)).ok());
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "02", "action", "failed", "no funds")).ok());
  h.Restart();  // what a 200 acknowledged is on disk

  auto again = h.coordinator().PrepareWorkflow(PrepareWorkflow("w1"));
  REQUIRE(again);
  CHECK(StepsOf(*again) ==
        std::vector<std::string>{"01:action:succeed:" + binary, "02:action:failed:no funds"});
}

TEST_CASE("a step is recorded once: the same report again answers as the first, another is 409",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());
  CHECK(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());

  const Status other_data =
      h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "b"));
  CHECK(other_data.code() == StatusCode::kConflict);
  CHECK_THAT(other_data.message(), Catch::Contains("other data"));
  const Status other_status =
      h.coordinator().RegisterBranch(Step("w1", "01", "action", "failed", "a"));
  CHECK(other_status.code() == StatusCode::kConflict);
  // The same branch's phase 2 is another row.
  CHECK(h.coordinator().RegisterBranch(Step("w1", "01", "commit", "succeed", "")).ok());

  auto stored = h.coordinator().PrepareWorkflow(PrepareWorkflow("w1"));
  REQUIRE(stored);
  CHECK(StepsOf(*stored) == std::vector<std::string>{"01:action:succeed:a", "01:commit:succeed:"});
}

TEST_CASE("a step beyond the row limit is refused naming branch_id, another refusal as itself",
          "[coordinator][workflow][limits]") {
  CoordinatorSettings settings;
  settings.max_registered_branches = 2;  // a workflow holds at most 4 rows, its resume among them
  CoordinatorHarness h({Duration(60'000), 10}, settings);
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());
  // What PostgreSQL answers a value it cannot take (a data exception, class 22).
  h.faulty_store().RefuseNextCommit(
      Status::InvalidArgument("postgresql: invalid byte sequence for encoding \"UTF8\""));
  const Status refused = h.coordinator().RegisterBranch(Step("w1", "02", "action", "succeed", "b"));
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.message(), Catch::Contains("invalid byte sequence"));
  CHECK_THAT(refused.message(), !Catch::Contains("branches"));

  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "02", "action", "succeed", "b")).ok());
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "02", "commit", "succeed", "")).ok());
  const Status beyond = h.coordinator().RegisterBranch(Step("w1", "01", "commit", "succeed", ""));
  CHECK(beyond.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(beyond.message(), Catch::StartsWith("branch_id:"));
  auto stored = h.coordinator().PrepareWorkflow(PrepareWorkflow("w1"));
  REQUIRE(stored);
  CHECK(StepsOf(*stored) == std::vector<std::string>{"01:action:succeed:a", "02:action:succeed:b",
                                                     "02:commit:succeed:"});
}

TEST_CASE("a step names an op and a status the workflow knows", "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  const Status op = h.coordinator().RegisterBranch(Step("w1", "01", "confirm", "succeed", ""));
  CHECK(op.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(op.message(), Catch::StartsWith("op: "));
  const Status missing_op = h.coordinator().RegisterBranch(Step("w1", "01", "", "succeed", ""));
  CHECK_THAT(missing_op.message(), Catch::StartsWith("op: required"));
  const Status status = h.coordinator().RegisterBranch(Step("w1", "01", "action", "prepared", ""));
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(), Catch::StartsWith("status: "));
  const Status unknown_gid =
      h.coordinator().RegisterBranch(Step("nope", "01", "action", "succeed", ""));
  CHECK(unknown_gid.code() == StatusCode::kNotFound);
  CHECK(StepsOf(h.Load("w1")).empty());
}

TEST_CASE("the submit records how the workflow ended, and its result is answered ever after",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());
  const std::string result("\x00receipt\xfe", 9);
  REQUIRE(h.coordinator().Submit(Finish("w1", "succeed", result)).ok());
  CHECK(h.StatusOf("w1") == GlobalStatus::kSucceed);
  CHECK(h.Load("w1").global.result == result);
  // A repeat whose answer was lost is answered again; another end is refused.
  CHECK(h.coordinator().Submit(Finish("w1", "succeed", result)).ok());
  CHECK(h.coordinator().Submit(Finish("w1", "succeed", "other")).code() == StatusCode::kConflict);
  CHECK(h.coordinator().Submit(Finish("w1", "failed", result)).code() == StatusCode::kConflict);
  // Nothing more is recorded once it ended.
  CHECK(h.coordinator().RegisterBranch(Step("w1", "02", "action", "succeed", "b")).code() ==
        StatusCode::kConflict);

  h.Restart();
  auto answer = h.coordinator().PrepareWorkflow(PrepareWorkflow("w1"));
  REQUIRE(answer);
  CHECK(answer->global.status == GlobalStatus::kSucceed);
  CHECK(answer->global.result == result);
  CHECK(StepsOf(*answer) == std::vector<std::string>{"01:action:succeed:a"});
}

TEST_CASE("a workflow that failed keeps its client's reason", "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  const std::string reason(5000, 'r');  // beyond DTM's 1,024 characters
  REQUIRE(h.coordinator().Submit(Finish("w1", "failed", "", reason)).ok());
  CHECK(h.StatusOf("w1") == GlobalStatus::kFailed);
  CHECK(h.Load("w1").global.rollback_reason == reason);
}

TEST_CASE("a workflow's submit names what is wrong with its req_extra", "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  engine::SubmitRequest no_status = Finish("w1", "succeed");
  no_status.req_extra.erase("status");
  CHECK_THAT(h.coordinator().Submit(no_status).message(),
             Catch::StartsWith("req_extra.status: required"));
  CHECK_THAT(h.coordinator().Submit(Finish("w1", "submitted")).message(),
             Catch::StartsWith("req_extra.status: must be succeed or failed"));
  engine::SubmitRequest bad_result = Finish("w1", "succeed");
  bad_result.req_extra["result"] = "not*base64";
  CHECK_THAT(h.coordinator().Submit(bad_result).message(),
             Catch::StartsWith("req_extra.result: must be base64"));
  CHECK(h.StatusOf("w1") == GlobalStatus::kPrepared);
}

TEST_CASE("prepareWorkflow again must run the same workflow on the same input",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1", "in")));
  // Resumed by another instance of the service: another callback is the same workflow.
  CHECK(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1", "in", "http://shop-2/resume")));
  auto other_input = h.coordinator().PrepareWorkflow(PrepareWorkflow("w1", "other"));
  REQUIRE_FALSE(other_input);
  CHECK(other_input.status().code() == StatusCode::kConflict);
  CHECK_THAT(other_input.status().message(), Catch::Contains("custom_data"));
}

TEST_CASE("prepareWorkflow refuses a gid of another type and a request without name or callback",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  engine::PrepareRequest tcc;
  tcc.gid = "t1";
  tcc.trans_type = TransType::kTcc;
  REQUIRE(h.coordinator().Prepare(tcc).ok());
  auto taken = h.coordinator().PrepareWorkflow(PrepareWorkflow("t1"));
  REQUIRE_FALSE(taken);
  CHECK(taken.status().code() == StatusCode::kConflict);

  engine::PrepareRequest nameless = PrepareWorkflow("w2");
  nameless.options.workflow_name.clear();
  auto no_name = h.coordinator().PrepareWorkflow(nameless);
  REQUIRE_FALSE(no_name);
  CHECK_THAT(no_name.status().message(), Catch::StartsWith("custom_data.name: required"));

  engine::PrepareRequest no_callback = PrepareWorkflow("w3");
  no_callback.query_prepared.clear();
  auto refused = h.coordinator().PrepareWorkflow(no_callback);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Catch::StartsWith("query_prepared: required"));

  // And the other doors refuse a workflow: it is prepared by prepareWorkflow only.
  engine::PrepareRequest plain = PrepareWorkflow("w4");
  CHECK_THAT(h.coordinator().Prepare(plain).message(), Catch::StartsWith("trans_type: prepare"));
}

TEST_CASE("a workflow its client left unfinished is resumed a retry interval later, by name",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1", "the input")));
  h.Advance(kSecond / 2);
  CHECK(h.caller().calls().empty());  // its client is still running it

  h.Advance(kSecond);
  REQUIRE(h.caller().calls().size() == 1);
  const engine::BranchCall call = h.caller().calls()[0];
  CHECK(call.url == kCallback);
  CHECK(call.branch_id == "00");
  CHECK(engine::WireOp(call) == "transfer");
  CHECK(call.data == "the input");
  CHECK(call.trans_type == TransType::kWorkflow);
}

TEST_CASE("a workflow whose client keeps reporting steps is not resumed under it",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  h.Advance(kSecond * 8 / 10);
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());
  h.Advance(kSecond * 4 / 10);  // 1.2 s after the prepare, 0.4 s after the report
  CHECK(h.caller().calls().empty());
  h.Advance(kSecond * 7 / 10);  // 1.1 s after the report
  CHECK(h.caller().calls().size() == 1);
}

TEST_CASE("a resume is asked again with backoff until the workflow's own submit ends it",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  h.caller().Script("00", BranchOp::kResume, {Ongoing(), Unknown(), Failure()});
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  h.Advance(kSecond);  // ONGOING
  h.Advance(kSecond);  // UNKNOWN: one failure
  h.Advance(kSecond);  // FAILURE: the client did not submit, asked again after backoff
  REQUIRE(h.caller().calls().size() == 3);
  CHECK(h.StatusOf("w1") == GlobalStatus::kPrepared);
  const storage::BranchRecord resume = h.Load("w1").branches.front();
  CHECK(resume.op == BranchOp::kResume);
  CHECK(resume.status == BranchStatus::kPrepared);
  CHECK(resume.failures == 2);

  // A SUCCESS without a submit is not an end either: asked again.
  h.Advance(10 * kSecond);
  REQUIRE(h.caller().calls().size() == 4);
  h.Advance(10 * kSecond);
  REQUIRE(h.caller().calls().size() == 5);
  CHECK(h.Load("w1").branches.front().status == BranchStatus::kPrepared);

  // The client finishes it: no resume after that.
  REQUIRE(h.coordinator().Submit(Finish("w1", "succeed")).ok());
  h.Advance(60 * kSecond);
  CHECK(h.caller().calls().size() == 5);
}

TEST_CASE("a gRPC callback is resumed with WorkflowData{data} as its message",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  const std::string input(200, 'x');  // a length of two varint bytes
  REQUIRE(h.coordinator().PrepareWorkflow(
      PrepareWorkflow("w1", input, "grpc://shop:50051/workflow.Workflow/Execute")));
  h.Advance(2 * kSecond);
  REQUIRE_FALSE(h.caller().calls().empty());
  CHECK(h.caller().calls()[0].data == std::string("\x0a\xc8\x01", 3) + input);
}

TEST_CASE("an operator does not resolve a resume, but may stop the workflow",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  h.caller().Script("00", BranchOp::kResume, {Unknown()});
  REQUIRE(h.coordinator().PrepareWorkflow(PrepareWorkflow("w1")));
  h.Advance(2 * kSecond);
  REQUIRE(h.caller().calls().size() == 1);
  const Status resolved = h.coordinator().Resolve(
      engine::ResolveRequest{"w1", "00", "resume", "succeed", "looks done", "on-call"});
  CHECK(resolved.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(resolved.message(), Catch::StartsWith("op: a resume is not resolved by hand"));
  REQUIRE(h.coordinator().ForceStop("w1", "abandoned").ok());
  CHECK(h.StatusOf("w1") == GlobalStatus::kFailed);
  h.Advance(60 * kSecond);
  CHECK(h.caller().calls().size() == 1);
}

TEST_CASE("past its timeout_to_fail a workflow records no new action, but rolls back and ends",
          "[coordinator][workflow]") {
  CoordinatorHarness h;
  engine::PrepareRequest prepare = PrepareWorkflow("w1");
  prepare.options.timeout_to_fail = 10 * kSecond;
  REQUIRE(h.coordinator().PrepareWorkflow(prepare));
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());
  h.Advance(2 * kSecond);  // resumed before its deadline too: the deadline does not delay it
  CHECK(h.caller().calls().size() == 1);
  h.Advance(10 * kSecond);
  const Status late = h.coordinator().RegisterBranch(Step("w1", "02", "action", "succeed", "b"));
  CHECK(late.code() == StatusCode::kConflict);
  CHECK_THAT(late.message(), Catch::Contains("timed out"));
  // A repeat of a step recorded in time is still answered as the first.
  CHECK(h.coordinator().RegisterBranch(Step("w1", "01", "action", "succeed", "a")).ok());
  REQUIRE(h.coordinator().RegisterBranch(Step("w1", "01", "rollback", "succeed", "")).ok());
  REQUIRE(h.coordinator().Submit(Finish("w1", "failed", "", "timed out")).ok());
  CHECK(h.StatusOf("w1") == GlobalStatus::kFailed);
}

}  // namespace
}  // namespace settle::drive
