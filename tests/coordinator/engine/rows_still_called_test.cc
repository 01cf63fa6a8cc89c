// Which branch rows the coordinator will still call: only those have a next retry to show
// (/query's next_retry_at, the admin console's "next retry").
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "settle/engine/decision.h"
#include "transaction_builder.h"

namespace settle::engine {
namespace {

using testing::RowOf;
using testing::TransactionBuilder;

using testing::kT0;

// The rows still called, as "01:action" strings.
std::set<std::string> StillCalled(const storage::Transaction& tx) {
  const std::vector<bool> called = RowsStillCalled(tx);
  REQUIRE(called.size() == tx.branches.size());
  std::set<std::string> names;
  for (std::size_t i = 0; i < called.size(); ++i) {
    if (called[i]) {
      names.insert(tx.branches[i].branch_id + ":" + std::string(ToString(tx.branches[i].op)));
    }
  }
  return names;
}

TEST_CASE("a submitted saga will still call its unfinished actions and no compensation",
          "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(3).Build();
  RowOf(tx, "01", BranchOp::kAction).status = BranchStatus::kSucceed;
  CHECK(StillCalled(tx) == std::set<std::string>{"02:action", "03:action"});
}

TEST_CASE("an aborting saga will call only the compensations of steps that started",
          "[engine][saga]") {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kAborting, kT0).SagaSteps(3).Build();
  RowOf(tx, "01", BranchOp::kAction).status = BranchStatus::kSucceed;
  RowOf(tx, "02", BranchOp::kAction).status = BranchStatus::kFailed;
  // Step 3 never started: its action and compensation are never called.
  CHECK(StillCalled(tx) == std::set<std::string>{"01:compensate", "02:compensate"});
  RowOf(tx, "02", BranchOp::kCompensate).status = BranchStatus::kSucceed;
  CHECK(StillCalled(tx) == std::set<std::string>{"01:compensate"});
}

TEST_CASE("a finished transaction will call no row again", "[engine]") {
  for (GlobalStatus done : {GlobalStatus::kSucceed, GlobalStatus::kFailed}) {
    CHECK(StillCalled(TransactionBuilder::Saga(done, kT0).SagaSteps(2).Build()).empty());
  }
  CHECK(StillCalled(TransactionBuilder::Tcc(GlobalStatus::kSucceed, kT0).TccBranch("01").Build())
            .empty());
  auto stopped = TransactionBuilder::Tcc(GlobalStatus::kFailed, kT0).TccBranch("01").Build();
  stopped.global.force_stopped = true;
  CHECK(StillCalled(stopped).empty());
}

TEST_CASE("a failed TCC nobody force-stopped will still call a cancel never made",
          "[engine][repair]") {
  const auto tx = TransactionBuilder::Tcc(GlobalStatus::kFailed, kT0).TccBranch("01").Build();
  CHECK(StillCalled(tx) == std::set<std::string>{"01:cancel"});
}

TEST_CASE("a TCC will call the confirms when submitted, the cancels when aborting",
          "[engine][tcc]") {
  CHECK(StillCalled(TransactionBuilder::Tcc(GlobalStatus::kPrepared, kT0).TccBranch("01").Build())
            .empty());
  CHECK(
      StillCalled(TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0).TccBranch("01").Build()) ==
      std::set<std::string>{"01:confirm"});
  CHECK(
      StillCalled(TransactionBuilder::Tcc(GlobalStatus::kAborting, kT0).TccBranch("01").Build()) ==
      std::set<std::string>{"01:cancel"});
}

}  // namespace
}  // namespace settle::engine
