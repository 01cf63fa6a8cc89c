#include "settle/engine/saga_engine.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "transaction_builder.h"

namespace settle::engine {
namespace {

using testing::RowOf;
using testing::TransactionBuilder;

using testing::kSecond;
using testing::kT0;

// The calls of a decision as "01:action" strings, to compare as a set.
std::set<std::string> Calls(const storage::Transaction& tx, const Decision& d) {
  std::set<std::string> calls;
  for (std::size_t row : d.calls) {
    calls.insert(tx.branches[row].branch_id + ":" + std::string(ToString(tx.branches[row].op)));
  }
  return calls;
}

void Succeed(storage::Transaction& tx, const std::string& id, BranchOp op) {
  RowOf(tx, id, op).status = BranchStatus::kSucceed;
}

TEST_CASE("a saga runs its actions one after another in step order", "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(3).Build();
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"01:action"});
  Succeed(tx, "01", BranchOp::kAction);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"02:action"});
  Succeed(tx, "02", BranchOp::kAction);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"03:action"});
  Succeed(tx, "03", BranchOp::kAction);
  CHECK(DecideSaga(tx, kT0).next_status == GlobalStatus::kSucceed);
}

TEST_CASE("an action that answered FAILURE aborts the saga", "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(3).Build();
  Succeed(tx, "01", BranchOp::kAction);
  RowOf(tx, "02", BranchOp::kAction).status = BranchStatus::kFailed;
  RowOf(tx, "02", BranchOp::kAction).last_error = "FAILURE: insufficient funds";
  const Decision d = DecideSaga(tx, kT0);
  CHECK(d.next_status == GlobalStatus::kAborting);
  CHECK_THAT(d.reason,
             Catch::Contains("branch 02 action failed") && Catch::Contains("insufficient funds"));
}

TEST_CASE("compensation covers the failed step and runs in reverse step order", "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kAborting, kT0).SagaSteps(3).Build();
  Succeed(tx, "01", BranchOp::kAction);
  RowOf(tx, "02", BranchOp::kAction).status = BranchStatus::kFailed;

  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"02:compensate"});
  Succeed(tx, "02", BranchOp::kCompensate);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"01:compensate"});
  Succeed(tx, "01", BranchOp::kCompensate);
  // Step 3 never started: it is not compensated.
  CHECK(DecideSaga(tx, kT0).next_status == GlobalStatus::kFailed);
}

TEST_CASE("an action whose outcome was lost in a crash is compensated too", "[engine][saga]") {
  // Step 2 was due (step 1 succeeded) but no outcome was recorded: it may have run.
  auto tx = TransactionBuilder::Saga(GlobalStatus::kAborting, kT0).SagaSteps(3).Build();
  Succeed(tx, "01", BranchOp::kAction);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"02:compensate"});
}

TEST_CASE("an action failing retry_limit times in a row aborts the saga", "[engine][saga]") {
  auto tx =
      TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(2).RetryLimit(3).Build();
  RowOf(tx, "01", BranchOp::kAction).failures = 2;
  CHECK_FALSE(DecideSaga(tx, kT0).next_status);
  RowOf(tx, "01", BranchOp::kAction).failures = 3;
  const Decision d = DecideSaga(tx, kT0);
  CHECK(d.next_status == GlobalStatus::kAborting);
  CHECK_THAT(d.reason, Catch::Contains("retry_limit"));
}

TEST_CASE("a saga still running its actions at timeout_to_fail is aborted", "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0)
                .SagaSteps(2)
                .TimeoutToFail(10 * kSecond)
                .Build();
  RowOf(tx, "01", BranchOp::kAction).next_retry_at = kT0 + 30 * kSecond;
  const Decision waiting = DecideSaga(tx, kT0 + kSecond);
  CHECK(waiting.calls.empty());
  CHECK(waiting.wake_at == kT0 + 10 * kSecond);  // the deadline comes before the retry

  const Decision expired = DecideSaga(tx, kT0 + 10 * kSecond);
  CHECK(expired.next_status == GlobalStatus::kAborting);
  CHECK_THAT(expired.reason, Catch::Contains("timeout_to_fail"));
}

TEST_CASE("a concurrent saga without orders runs every action at once", "[engine][saga]") {
  auto tx =
      TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(3).Concurrent().Build();
  CHECK(Calls(tx, DecideSaga(tx, kT0)) ==
        std::set<std::string>{"01:action", "02:action", "03:action"});
}

TEST_CASE("a concurrent saga runs a step only after the steps its orders name", "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0)
                .SagaSteps(3)
                .Concurrent({{2, {0, 1}}})
                .Build();
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"01:action", "02:action"});
  Succeed(tx, "01", BranchOp::kAction);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"02:action"});
  Succeed(tx, "02", BranchOp::kAction);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"03:action"});
}

TEST_CASE("an action goes out only once the successes that let it start are stored",
          "[engine][saga]") {
  // The rows it names are the prerequisites' actions: a crash must not lose what says that
  // the action may have started.
  auto rows = [](const storage::Transaction& tx, const Decision& d) {
    std::set<std::string> names;
    for (std::size_t row : d.stored_before_calls) {
      names.insert(tx.branches[row].branch_id + ":" + std::string(ToString(tx.branches[row].op)));
    }
    return names;
  };
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0)
                .SagaSteps(3)
                .Concurrent({{2, {0, 1}}})
                .Build();
  CHECK(DecideSaga(tx, kT0).stored_before_calls.empty());  // the first actions wait for nothing
  Succeed(tx, "01", BranchOp::kAction);
  Succeed(tx, "02", BranchOp::kAction);
  const Decision third = DecideSaga(tx, kT0);
  CHECK(Calls(tx, third) == std::set<std::string>{"03:action"});
  CHECK(rows(tx, third) == std::set<std::string>{"01:action", "02:action"});

  auto serial = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(2).Build();
  Succeed(serial, "01", BranchOp::kAction);
  CHECK(rows(serial, DecideSaga(serial, kT0)) == std::set<std::string>{"01:action"});
  // Compensations wait for the move to aborting, which is stored before any call.
  serial.global.status = GlobalStatus::kAborting;
  CHECK(DecideSaga(serial, kT0).stored_before_calls.empty());
}

TEST_CASE("a concurrent saga compensates a step only after the steps that waited for it",
          "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kAborting, kT0)
                .SagaSteps(3)
                .Concurrent({{2, {0, 1}}})
                .Build();
  Succeed(tx, "01", BranchOp::kAction);
  Succeed(tx, "02", BranchOp::kAction);
  RowOf(tx, "03", BranchOp::kAction).status = BranchStatus::kFailed;
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"03:compensate"});
  Succeed(tx, "03", BranchOp::kCompensate);
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"01:compensate", "02:compensate"});
}

TEST_CASE("a step with nothing to compensate is skipped", "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kAborting, kT0).SagaSteps(2).Build();
  Succeed(tx, "01", BranchOp::kAction);
  RowOf(tx, "02", BranchOp::kAction).status = BranchStatus::kFailed;
  Succeed(tx, "02", BranchOp::kCompensate);  // stored as succeed: no compensate URL
  CHECK(Calls(tx, DecideSaga(tx, kT0)) == std::set<std::string>{"01:compensate"});
}

TEST_CASE("a finished saga needs nothing", "[engine][saga]") {
  for (auto status : {GlobalStatus::kSucceed, GlobalStatus::kFailed}) {
    auto tx = TransactionBuilder::Saga(status, kT0).SagaSteps(2).Build();
    const Decision d = DecideSaga(tx, kT0);
    CHECK_FALSE(d.next_status);
    CHECK(d.calls.empty());
    CHECK_FALSE(d.wake_at);
  }
}

}  // namespace
}  // namespace settle::engine
