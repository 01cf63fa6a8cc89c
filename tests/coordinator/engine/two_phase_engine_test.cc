#include "settle/engine/two_phase_engine.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "transaction_builder.h"

namespace settle::engine {
namespace {

using testing::RowOf;
using testing::TransactionBuilder;

using testing::kSecond;
using testing::kT0;

TEST_CASE("a prepared TCC waits for its client until timeout_to_fail", "[engine][tcc]") {
  auto tx = TransactionBuilder::Tcc(GlobalStatus::kPrepared, kT0)
                .TimeoutToFail(35 * kSecond)
                .TccBranch("01")
                .Build();
  const Decision waiting = DecideTcc(tx, kT0 + 10 * kSecond);
  CHECK_FALSE(waiting.next_status);
  CHECK(waiting.calls.empty());
  CHECK(waiting.wake_at == kT0 + 35 * kSecond);

  const Decision expired = DecideTcc(tx, kT0 + 35 * kSecond);
  CHECK(expired.next_status == GlobalStatus::kAborting);
  CHECK_THAT(expired.reason, Catch::Contains("timeout_to_fail"));
}

TEST_CASE("a submitted TCC confirms every branch at once", "[engine][tcc]") {
  auto tx = TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0)
                .TccBranch("01")
                .TccBranch("02")
                .Build();
  const Decision d = DecideTcc(tx, kT0);
  REQUIRE(d.calls.size() == 2);
  for (std::size_t row : d.calls) CHECK(tx.branches[row].op == BranchOp::kConfirm);
  CHECK_FALSE(d.next_status);
}

TEST_CASE("a submitted TCC succeeds once every confirm has succeeded", "[engine][tcc]") {
  auto tx = TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0)
                .TccBranch("01")
                .TccBranch("02")
                .Build();
  RowOf(tx, "01", BranchOp::kConfirm).status = BranchStatus::kSucceed;
  const Decision half = DecideTcc(tx, kT0);
  REQUIRE(half.calls.size() == 1);
  CHECK(tx.branches[half.calls[0]].branch_id == "02");

  RowOf(tx, "02", BranchOp::kConfirm).status = BranchStatus::kSucceed;
  CHECK(DecideTcc(tx, kT0).next_status == GlobalStatus::kSucceed);
}

TEST_CASE("an aborting TCC cancels every registered branch and then fails", "[engine][tcc]") {
  auto tx =
      TransactionBuilder::Tcc(GlobalStatus::kAborting, kT0).TccBranch("01").TccBranch("02").Build();
  const Decision d = DecideTcc(tx, kT0);
  REQUIRE(d.calls.size() == 2);
  for (std::size_t row : d.calls) CHECK(tx.branches[row].op == BranchOp::kCancel);

  RowOf(tx, "01", BranchOp::kCancel).status = BranchStatus::kSucceed;
  RowOf(tx, "02", BranchOp::kCancel).status = BranchStatus::kSucceed;
  CHECK(DecideTcc(tx, kT0).next_status == GlobalStatus::kFailed);
}

TEST_CASE("a TCC without branches finishes at once", "[engine][tcc]") {
  CHECK(
      DecideTcc(TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0).Build(), kT0).next_status ==
      GlobalStatus::kSucceed);
  CHECK(DecideTcc(TransactionBuilder::Tcc(GlobalStatus::kAborting, kT0).Build(), kT0).next_status ==
        GlobalStatus::kFailed);
}

TEST_CASE("a confirm waiting for its retry is not called early, the engine says when",
          "[engine][tcc]") {
  auto tx = TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0)
                .TccBranch("01")
                .TccBranch("02")
                .Build();
  RowOf(tx, "01", BranchOp::kConfirm).next_retry_at = kT0 + 4 * kSecond;
  RowOf(tx, "02", BranchOp::kConfirm).next_retry_at = kT0 + 2 * kSecond;
  const Decision d = DecideTcc(tx, kT0 + kSecond);
  CHECK(d.calls.empty());
  CHECK(d.wake_at == kT0 + 2 * kSecond);
  CHECK(DecideTcc(tx, kT0 + 2 * kSecond).calls.size() == 1);
}

TEST_CASE("a finished TCC needs nothing", "[engine][tcc]") {
  auto succeeded = TransactionBuilder::Tcc(GlobalStatus::kSucceed, kT0).TccBranch("01").Build();
  RowOf(succeeded, "01", BranchOp::kConfirm).status = BranchStatus::kSucceed;
  auto failed = TransactionBuilder::Tcc(GlobalStatus::kFailed, kT0).TccBranch("01").Build();
  RowOf(failed, "01", BranchOp::kCancel).status = BranchStatus::kSucceed;
  // An operator's forceStop leaves its undone calls undone.
  auto stopped = TransactionBuilder::Tcc(GlobalStatus::kFailed, kT0).TccBranch("01").Build();
  stopped.global.force_stopped = true;
  for (const auto& tx : {succeeded, failed, stopped}) {
    const Decision d = DecideTcc(tx, kT0 + 100 * kSecond);
    CHECK_FALSE(d.next_status);
    CHECK(d.calls.empty());
    CHECK_FALSE(d.wake_at);
  }
}

TEST_CASE(
    "a failed TCC left with a cancel never made (the timeout/registration race) cancels it and "
    "stays failed",
    "[engine][tcc][repair]") {
  auto tx =
      TransactionBuilder::Tcc(GlobalStatus::kFailed, kT0).TccBranch("01").TccBranch("02").Build();
  RowOf(tx, "01", BranchOp::kCancel).status = BranchStatus::kSucceed;
  RowOf(tx, "02", BranchOp::kCancel).next_retry_at = kT0 + 5 * kSecond;

  const Decision waiting = DecideTcc(tx, kT0);
  CHECK_FALSE(waiting.next_status);
  CHECK(waiting.calls.empty());
  CHECK(waiting.wake_at == kT0 + 5 * kSecond);

  const Decision due = DecideTcc(tx, kT0 + 5 * kSecond);
  CHECK_FALSE(due.next_status);
  REQUIRE(due.calls.size() == 1);
  CHECK(tx.branches[due.calls[0]].branch_id == "02");
  CHECK(tx.branches[due.calls[0]].op == BranchOp::kCancel);
}

// The ops of a decision's calls, as "01:commit" strings.
std::vector<std::string> CallNames(const storage::Transaction& tx, const Decision& d) {
  std::vector<std::string> names;
  for (std::size_t row : d.calls) {
    names.push_back(tx.branches[row].branch_id + ":" + std::string(ToString(tx.branches[row].op)));
  }
  return names;
}

TEST_CASE("a submitted XA commits every registered branch at once, then succeeds", "[engine][xa]") {
  auto tx =
      TransactionBuilder::Xa(GlobalStatus::kSubmitted, kT0).XaBranch("01").XaBranch("02").Build();
  CHECK(CallNames(tx, DecideXa(tx, kT0)) == std::vector<std::string>{"01:commit", "02:commit"});
  RowOf(tx, "01", BranchOp::kCommit).status = BranchStatus::kSucceed;
  CHECK(CallNames(tx, DecideXa(tx, kT0)) == std::vector<std::string>{"02:commit"});
  RowOf(tx, "02", BranchOp::kCommit).status = BranchStatus::kSucceed;
  CHECK(DecideXa(tx, kT0).next_status == GlobalStatus::kSucceed);
}

TEST_CASE("an aborting XA rolls back every registered branch, then fails", "[engine][xa]") {
  auto tx =
      TransactionBuilder::Xa(GlobalStatus::kAborting, kT0).XaBranch("01").XaBranch("02").Build();
  CHECK(CallNames(tx, DecideXa(tx, kT0)) == std::vector<std::string>{"01:rollback", "02:rollback"});
  RowOf(tx, "01", BranchOp::kRollback).status = BranchStatus::kSucceed;
  RowOf(tx, "02", BranchOp::kRollback).status = BranchStatus::kSucceed;
  CHECK(DecideXa(tx, kT0).next_status == GlobalStatus::kFailed);
}

TEST_CASE("a prepared XA rolls back once timeout_to_fail has passed", "[engine][xa]") {
  auto tx = TransactionBuilder::Xa(GlobalStatus::kPrepared, kT0)
                .TimeoutToFail(10 * kSecond)
                .XaBranch("01")
                .Build();
  CHECK(DecideXa(tx, kT0 + 5 * kSecond).wake_at == kT0 + 10 * kSecond);
  CHECK(DecideXa(tx, kT0 + 10 * kSecond).next_status == GlobalStatus::kAborting);
}

}  // namespace
}  // namespace settle::engine
