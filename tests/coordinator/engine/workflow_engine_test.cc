#include "settle/engine/workflow_engine.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "settle/engine/decision.h"
#include "settle/engine/outcome_recorder.h"
#include "settle/engine/transaction_types.h"

namespace settle::engine {
namespace {

constexpr Duration kSecond{1000};
const TimePoint kT0 = FromUnixMillis(1'700'000'000'000);

PrepareRequest Prepare(const std::string& input, const std::string& callback) {
  PrepareRequest r;
  r.gid = "w1";
  r.trans_type = TransType::kWorkflow;
  r.options.workflow_name = "transfer";
  r.options.workflow_input = input;
  r.query_prepared = callback;
  return r;
}

storage::Transaction Prepared(const std::string& input = "in",
                              const std::string& callback = "http://shop/resume") {
  auto tx = BuildPrepared(Prepare(input, callback), {}, TransactionDefaults{}, kT0);
  REQUIRE(tx);
  return std::move(*tx);
}

TEST_CASE("a workflow is prepared with one resume row, due a retry interval after",
          "[engine][workflow]") {
  const storage::Transaction tx = Prepared();
  REQUIRE(tx.branches.size() == 1);
  const storage::BranchRecord& resume = tx.branches[0];
  CHECK(resume.branch_id == "00");
  CHECK(resume.op == BranchOp::kResume);
  CHECK(resume.url == "http://shop/resume");
  CHECK(resume.data.str() == "in");
  CHECK(resume.next_retry_at == kT0 + kSecond);
  // No deadline of its own: the transaction is due when its resume is.
  CHECK(tx.global.options.timeout_to_fail == Duration(0));
  CHECK(tx.global.next_cron_time == kT0 + kSecond);
  CHECK(tx.global.options.workflow_name == "transfer");
}

TEST_CASE("a prepared workflow is resumed when its resume row is due, and only then",
          "[engine][workflow]") {
  storage::Transaction tx = Prepared();
  const Decision early = Decide(tx, kT0);
  CHECK(early.calls.empty());
  CHECK(early.wake_at == kT0 + kSecond);
  const Decision due = Decide(tx, kT0 + kSecond);
  CHECK(due.calls == std::vector<std::size_t>{0});
  CHECK_FALSE(due.next_status);
  CHECK(RowsStillCalled(tx) == std::vector<bool>{true});

  tx.global.status = GlobalStatus::kSucceed;
  CHECK(Decide(tx, kT0 + kSecond).calls.empty());
  CHECK(RowsStillCalled(tx) == std::vector<bool>{false});
}

TEST_CASE("no answer of a resume settles its row: the workflow's submit ends it",
          "[engine][workflow]") {
  const RetryPolicy policy({Duration(60'000), 10}, RetryPolicy::NoJitter());
  for (BranchResult result : {BranchResult::kSuccess, BranchResult::kFailure,
                              BranchResult::kOngoing, BranchResult::kUnknown}) {
    storage::Transaction tx = Prepared();
    storage::BranchRecord& row = tx.branches[0];
    RecordOutcome(row, TransType::kWorkflow, {result, 200, ""}, kSecond, policy, kT0);
    CHECK(row.status == BranchStatus::kPrepared);
    CHECK(row.next_retry_at > kT0);
    CHECK(Decide(tx, row.next_retry_at).calls == std::vector<std::size_t>{0});
  }
}

TEST_CASE("the resume names the workflow and posts its input even when it is empty",
          "[engine][workflow]") {
  const storage::Transaction tx = Prepared("");
  const TypeRules& rules = RulesOf(TransType::kWorkflow);
  REQUIRE(rules.call_op != nullptr);
  CHECK(rules.call_op(tx, tx.branches[0]) == "transfer");
  CHECK(rules.posts_always);
}

TEST_CASE(
    "a workflow may not be named as a branch op, since its resume call carries the name as op",
    "[engine][workflow][security]") {
  for (const char* name : {"try", "confirm", "cancel", "action", "compensate", "msg", "commit",
                           "rollback", "business", "resume", "Confirm", "TRY", "cAnCeL"}) {
    INFO(name);
    PrepareRequest r = Prepare("in", "http://bank/api/TransOutConfirm");
    r.options.workflow_name = name;
    const Status refused = CheckPrepareWorkflow(r);
    CHECK(refused.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(refused.message(), Catch::StartsWith("custom_data.name: must not be a branch op"));
  }
  // Names that only contain an op are names.
  for (const char* name : {"confirm_order", "try-again", "transfer", "msgs"}) {
    INFO(name);
    PrepareRequest r = Prepare("in", "http://shop/resume");
    r.options.workflow_name = name;
    CHECK(CheckPrepareWorkflow(r).ok());
  }
}

TEST_CASE("a gRPC callback gets its input as the protobuf WorkflowData{bytes data = 1}",
          "[engine][workflow]") {
  CHECK(WorkflowDataMessage("") == "");
  CHECK(WorkflowDataMessage("ab") == std::string("\x0a\x02"
                                                 "ab",
                                                 4));
  CHECK(WorkflowDataMessage(std::string(127, 'x')) == "\x0a\x7f" + std::string(127, 'x'));
  CHECK(WorkflowDataMessage(std::string(128, 'x')) ==
        std::string("\x0a\x80\x01", 3) + std::string(128, 'x'));
  CHECK(WorkflowDataMessage(std::string(16384, 'x')) ==
        std::string("\x0a\x80\x80\x01", 4) + std::string(16384, 'x'));
  const storage::Transaction tx = Prepared("ab", "shop:50051/workflow.Workflow/Execute");
  CHECK(tx.branches[0].data.str() == std::string("\x0a\x02"
                                                 "ab",
                                                 4));
}

TEST_CASE("the step log is every row but the resume", "[engine][workflow]") {
  storage::Transaction tx = Prepared();
  RegisterBranchRequest step;
  step.gid = "w1";
  step.trans_type = TransType::kWorkflow;
  step.branch_id = "01";
  step.op = "action";
  step.status = "failed";
  step.data = "no funds";
  REQUIRE(CheckRegisterBranch(step).ok());
  for (storage::BranchRecord& row : RegisteredRows(step, kT0)) tx.branches.push_back(row);
  const auto log = StepLogOf(tx);
  REQUIRE(log.size() == 1);
  CHECK(log[0]->status == BranchStatus::kFailed);
  CHECK(log[0]->data.str() == "no funds");
  CHECK(MatchRecordedStep(tx, step).ok());
  step.data = "other";
  CHECK(MatchRecordedStep(tx, step).code() == StatusCode::kConflict);
  step.branch_id = "02";
  CHECK(MatchRecordedStep(tx, step).code() == StatusCode::kUnavailable);
}

TEST_CASE("a workflow ends once: the same end again is a repeat, another is a conflict",
          "[engine][workflow]") {
  storage::GlobalRecord g;
  g.gid = "w1";
  g.status = GlobalStatus::kSucceed;
  g.result = "r";
  CHECK(MatchEnded(g, {GlobalStatus::kSucceed, "", "r"}).ok());
  CHECK(MatchEnded(g, {GlobalStatus::kSucceed, "", "other"}).code() == StatusCode::kConflict);
  CHECK(MatchEnded(g, {GlobalStatus::kFailed, "why", "r"}).code() == StatusCode::kConflict);
}

}  // namespace
}  // namespace settle::engine
