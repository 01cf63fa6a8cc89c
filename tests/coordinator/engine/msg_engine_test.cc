#include "settle/engine/msg_engine.h"

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

// The calls of a decision as "01:action" strings, in row order.
std::vector<std::string> Calls(const storage::Transaction& tx, const Decision& d) {
  std::vector<std::string> calls;
  for (std::size_t row : d.calls) {
    calls.push_back(tx.branches[row].branch_id + ":" + std::string(ToString(tx.branches[row].op)));
  }
  return calls;
}

void Deliver(storage::Transaction& tx, const std::string& id) {
  RowOf(tx, id, BranchOp::kAction).status = BranchStatus::kSucceed;
}

TEST_CASE("a prepared message waits for its client until timeout_to_fail, then asks",
          "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kPrepared, kT0)
                .TimeoutToFail(35 * kSecond)
                .BackCheck()
                .MsgStep(0)
                .Build();
  const Decision waiting = DecideMsg(tx, kT0 + 10 * kSecond);
  CHECK_FALSE(waiting.next_status);
  CHECK(waiting.calls.empty());
  CHECK(waiting.wake_at == kT0 + 35 * kSecond);

  const Decision asking = DecideMsg(tx, kT0 + 35 * kSecond);
  CHECK_FALSE(asking.next_status);
  CHECK(Calls(tx, asking) == std::vector<std::string>{"00:msg"});
}

TEST_CASE("the back-check decides a prepared message: SUCCESS submits, FAILURE fails it",
          "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kPrepared, kT0).BackCheck().MsgStep(0).Build();
  SECTION("committed") {
    RowOf(tx, "00", BranchOp::kMsg).status = BranchStatus::kSucceed;
    CHECK(DecideMsg(tx, kT0).next_status == GlobalStatus::kSubmitted);
  }
  SECTION("never committed") {
    RowOf(tx, "00", BranchOp::kMsg).status = BranchStatus::kFailed;
    RowOf(tx, "00", BranchOp::kMsg).last_error = "FAILURE: HTTP 409";
    const Decision d = DecideMsg(tx, kT0);
    CHECK(d.next_status == GlobalStatus::kFailed);
    CHECK_THAT(d.reason, Catch::Contains("query_prepared") && Catch::Contains("HTTP 409"));
    CHECK(d.calls.empty());
  }
  SECTION("not known yet: asked again when the row is due") {
    RowOf(tx, "00", BranchOp::kMsg).next_retry_at = kT0 + 3 * kSecond;
    const Decision d = DecideMsg(tx, kT0 + kSecond);
    CHECK(d.calls.empty());
    CHECK(d.wake_at == kT0 + 3 * kSecond);
    CHECK(Calls(tx, DecideMsg(tx, kT0 + 3 * kSecond)) == std::vector<std::string>{"00:msg"});
  }
}

TEST_CASE("a submitted message delivers its steps one after another", "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0)
                .BackCheck()
                .MsgStep(0)
                .MsgStep(1)
                .MsgStep(2)
                .Build();
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"01:action"});
  Deliver(tx, "01");
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"02:action"});
  Deliver(tx, "02");
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"03:action"});
  Deliver(tx, "03");
  CHECK(DecideMsg(tx, kT0).next_status == GlobalStatus::kSucceed);
}

TEST_CASE("a topic step goes to its subscribers one after another, before the next step",
          "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0).MsgStep(0, 2).MsgStep(1).Build();
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"01-01:action"});
  Deliver(tx, "01-01");
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"01-02:action"});
  Deliver(tx, "01-02");
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"02:action"});
}

TEST_CASE("a concurrent message delivers every step at once", "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0)
                .Concurrent()
                .MsgStep(0)
                .MsgStep(1)
                .Build();
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"01:action", "02:action"});
}

TEST_CASE("a delivery that failed waits for its retry, the engine says when", "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0).MsgStep(0).Build();
  auto& row = RowOf(tx, "01", BranchOp::kAction);
  row.failures = 3;
  row.next_retry_at = kT0 + 4 * kSecond;
  const Decision d = DecideMsg(tx, kT0 + kSecond);
  CHECK(d.calls.empty());
  CHECK_FALSE(d.next_status);
  CHECK(d.wake_at == kT0 + 4 * kSecond);
}

TEST_CASE("without retry_limit a message is never dropped, however often a receiver fails",
          "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0).MsgStep(0).Build();
  RowOf(tx, "01", BranchOp::kAction).failures = 1000;
  const Decision d = DecideMsg(tx, kT0);
  CHECK_FALSE(d.next_status);
  CHECK(Calls(tx, d) == std::vector<std::string>{"01:action"});
}

TEST_CASE("with retry_limit a message gives up on a receiver that failed that often",
          "[engine][msg]") {
  auto tx = TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0)
                .RetryLimit(3)
                .MsgStep(0)
                .MsgStep(1)
                .Build();
  Deliver(tx, "01");
  auto& row = RowOf(tx, "02", BranchOp::kAction);
  row.failures = 2;
  row.last_error = "HTTP 503: down";
  CHECK(Calls(tx, DecideMsg(tx, kT0)) == std::vector<std::string>{"02:action"});
  row.failures = 3;
  const Decision d = DecideMsg(tx, kT0);
  CHECK(d.next_status == GlobalStatus::kFailed);
  CHECK_THAT(d.reason, Catch::Contains("branch 02") && Catch::Contains("retry_limit 3") &&
                           Catch::Contains("HTTP 503: down"));
  // Giving up is not a business outcome: an operator must act.
  CHECK(d.needs_operator);
}

TEST_CASE("a delayed message delivers nothing before create_time + delay", "[engine][msg]") {
  auto tx =
      TransactionBuilder::Msg(GlobalStatus::kSubmitted, kT0).Delay(10 * kSecond).MsgStep(0).Build();
  const Decision early = DecideMsg(tx, kT0 + 9 * kSecond);
  CHECK(early.calls.empty());
  CHECK(early.wake_at == kT0 + 10 * kSecond);
  CHECK(Calls(tx, DecideMsg(tx, kT0 + 10 * kSecond)) == std::vector<std::string>{"01:action"});
}

TEST_CASE("a finished message needs nothing", "[engine][msg]") {
  for (auto status : {GlobalStatus::kSucceed, GlobalStatus::kFailed}) {
    auto tx = TransactionBuilder::Msg(status, kT0).MsgStep(0).Build();
    const Decision d = DecideMsg(tx, kT0 + 100 * kSecond);
    CHECK_FALSE(d.next_status);
    CHECK(d.calls.empty());
    CHECK_FALSE(d.wake_at);
  }
}

}  // namespace
}  // namespace settle::engine
