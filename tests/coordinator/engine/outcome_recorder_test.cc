#include "settle/engine/outcome_recorder.h"

#include <catch2/catch.hpp>

#include <string>

#include "transaction_builder.h"

namespace settle::engine {
namespace {

using testing::RowOf;
using testing::TransactionBuilder;

using testing::kSecond;
using testing::kT0;

const RetryPolicy kPolicy(RetrySettings{60 * kSecond, 3}, RetryPolicy::NoJitter());

storage::BranchRecord Row(BranchOp op) {
  auto tx = TransactionBuilder::Saga(GlobalStatus::kSubmitted, kT0).SagaSteps(1).Build();
  auto tcc = TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0).TccBranch("01").Build();
  auto xa = TransactionBuilder::Xa(GlobalStatus::kSubmitted, kT0).XaBranch("01").Build();
  auto msg = TransactionBuilder::Msg(GlobalStatus::kPrepared, kT0).BackCheck().Build();
  if (op == BranchOp::kAction || op == BranchOp::kCompensate) return RowOf(tx, "01", op);
  if (op == BranchOp::kCommit || op == BranchOp::kRollback) return RowOf(xa, "01", op);
  if (op == BranchOp::kMsg) return RowOf(msg, "00", op);
  return RowOf(tcc, "01", op);
}

TEST_CASE("a successful call completes the branch and ends its failure streak", "[outcome]") {
  auto row = Row(BranchOp::kConfirm);
  row.failures = 2;
  RecordOutcome(row, TransType::kSaga, {BranchResult::kSuccess, 200, ""}, kSecond, kPolicy, kT0);
  CHECK(row.status == BranchStatus::kSucceed);
  CHECK(row.attempts == 1);
  CHECK(row.failures == 0);
}

TEST_CASE("an unknown result is retried with a doubling backoff", "[outcome]") {
  auto row = Row(BranchOp::kConfirm);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kUnknown, 500, "HTTP 500: boom"}, kSecond,
                kPolicy, kT0);
  CHECK(row.status == BranchStatus::kPrepared);
  CHECK(row.failures == 1);
  CHECK(row.next_retry_at == kT0 + kSecond);
  CHECK_THAT(row.last_error, Catch::Contains("HTTP 500: boom"));
  RecordOutcome(row, TransType::kSaga, {BranchResult::kUnknown, 0, "connection refused"}, kSecond,
                kPolicy, kT0);
  CHECK(row.failures == 2);
  CHECK(row.next_retry_at == kT0 + 2 * kSecond);
  CHECK(row.attempts == 2);
}

TEST_CASE("a call its host's gate held is not recorded: no attempt, the same due time",
          "[outcome]") {
  auto row = Row(BranchOp::kAction);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kUnknown, 0, "connection refused"}, kSecond,
                kPolicy, kT0);
  const storage::BranchRecord before = row;
  BranchOutcome not_called;
  not_called.not_called_until = kT0 + 8 * kSecond;
  not_called.circuit_open = true;
  not_called.detail = "not called: the circuit for http://127.0.0.1:9 is open";
  RecordOutcome(row, TransType::kSaga, not_called, kSecond, kPolicy, kT0 + kSecond);
  CHECK(row.status == BranchStatus::kPrepared);
  CHECK(row.attempts == before.attempts);
  CHECK(row.failures == before.failures);
  CHECK(row.last_error == before.last_error);
  CHECK(row.failed_attempts.size() == before.failed_attempts.size());
  CHECK(row.next_retry_at == before.next_retry_at);
}

TEST_CASE("ONGOING keeps the interval and does not count as a failure", "[outcome]") {
  auto row = Row(BranchOp::kAction);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kUnknown, 503, ""}, kSecond, kPolicy, kT0);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kUnknown, 503, ""}, kSecond, kPolicy, kT0);
  REQUIRE(row.failures == 2);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kOngoing, 425, ""}, kSecond, kPolicy, kT0);
  CHECK(row.status == BranchStatus::kPrepared);
  CHECK(row.failures == 2);
  CHECK(row.next_retry_at == kT0 + 2 * kSecond);
}

TEST_CASE("FAILURE fails a saga action for good", "[outcome]") {
  auto row = Row(BranchOp::kAction);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kFailure, 409, "HTTP 409: no funds"}, kSecond,
                kPolicy, kT0);
  CHECK(row.status == BranchStatus::kFailed);
  CHECK(row.failures == 1);
  CHECK_THAT(row.last_error, Catch::Contains("no funds"));
}

TEST_CASE("FAILURE from confirm, cancel or compensate is a participant bug and is retried",
          "[outcome]") {
  for (auto op : {BranchOp::kConfirm, BranchOp::kCancel, BranchOp::kCompensate}) {
    auto row = Row(op);
    RecordOutcome(row, TransType::kSaga, {BranchResult::kFailure, 409, ""}, kSecond, kPolicy, kT0);
    CHECK(row.status == BranchStatus::kPrepared);
    CHECK(row.failures == 1);
    CHECK(row.next_retry_at == kT0 + kSecond);
    CHECK_THAT(row.last_error, Catch::Contains("participant bug"));
  }
}

TEST_CASE("FAILURE from XA's commit or rollback is a participant bug and is retried",
          "[outcome][xa]") {
  for (auto op : {BranchOp::kCommit, BranchOp::kRollback}) {
    auto row = Row(op);
    RecordOutcome(row, TransType::kXa, {BranchResult::kFailure, 409, ""}, kSecond, kPolicy, kT0);
    CHECK(row.status == BranchStatus::kPrepared);
    CHECK(row.failures == 1);
    CHECK_THAT(row.last_error, Catch::Contains("participant bug"));
  }
}

TEST_CASE("a message's back-check answering FAILURE fails it for good", "[outcome][msg]") {
  auto row = Row(BranchOp::kMsg);
  RecordOutcome(row, TransType::kMsg, {BranchResult::kFailure, 409, "HTTP 409: rolled back"},
                kSecond, kPolicy, kT0);
  CHECK(row.status == BranchStatus::kFailed);
  CHECK_THAT(row.last_error, Catch::Contains("rolled back"));
}

TEST_CASE("a message's receiver answering FAILURE is asked again, counted as a failure",
          "[outcome][msg]") {
  auto row = Row(BranchOp::kAction);
  RecordOutcome(row, TransType::kMsg, {BranchResult::kFailure, 409, "HTTP 409: not now"}, kSecond,
                kPolicy, kT0);
  CHECK(row.status == BranchStatus::kPrepared);
  CHECK(row.failures == 1);
  CHECK(row.next_retry_at == kT0 + kSecond);
  CHECK_THAT(row.last_error, Catch::Contains("not now"));
  CHECK_THAT(row.last_error, !Catch::Contains("participant bug"));
  CHECK(row.failed_attempts.size() == 1);
}

TEST_CASE("a transaction is stuck while a pending branch has failed too often in a row",
          "[outcome]") {
  auto tx = TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0).TccBranch("01").Build();
  auto& confirm = RowOf(tx, "01", BranchOp::kConfirm);
  confirm.failures = 2;
  CHECK_FALSE(HasStuckBranch(tx, kPolicy));
  confirm.failures = 3;
  CHECK(HasStuckBranch(tx, kPolicy));
  confirm.status = BranchStatus::kSucceed;
  CHECK_FALSE(HasStuckBranch(tx, kPolicy));
}

TEST_CASE("calls that do not succeed are kept in a bounded history, oldest first", "[outcome]") {
  auto row = Row(BranchOp::kConfirm);
  RecordOutcome(row, TransType::kSaga, {BranchResult::kSuccess, 200, ""}, kSecond, kPolicy, kT0);
  CHECK(row.failed_attempts.empty());  // success at once: nothing to keep

  auto failing = Row(BranchOp::kCancel);
  const std::size_t calls = storage::BranchRecord::kMaxFailedAttempts + 3;
  for (std::size_t i = 0; i < calls; ++i) {
    RecordOutcome(failing, TransType::kSaga,
                  {BranchResult::kUnknown, 500, "HTTP 500: try " + std::to_string(i)}, kSecond,
                  kPolicy, kT0 + kSecond * static_cast<int>(i));
  }
  RecordOutcome(failing, TransType::kSaga, {BranchResult::kOngoing, 425, "HTTP 425"}, kSecond,
                kPolicy, kT0 + kSecond * static_cast<int>(calls));

  const auto& history = failing.failed_attempts;
  REQUIRE(history.size() == storage::BranchRecord::kMaxFailedAttempts);
  CHECK(history.back().error == "ONGOING: HTTP 425");
  CHECK(history.back().at == kT0 + kSecond * static_cast<int>(calls));
  CHECK(history.front().error == "UNKNOWN: HTTP 500: try 4");  // the 4 oldest were dropped
  CHECK(failing.attempts == static_cast<int>(calls) + 1);
}

}  // namespace
}  // namespace settle::engine
