// An operator's pause and resume of one transaction (Coordinator::Pause, Resume): a paused
// transaction makes no call, is not retried and does not time out, across a restart; the
// client's requests are accepted and acted on at resume; a call in flight when it is paused is
// recorded, and nothing after it goes out; every pause and resume is audited.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "saga_requests.h"
#include "settle/drive/coordinator.h"
#include "transaction_builder.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Saga;
using testing::Unknown;
using Names = std::vector<std::string>;

constexpr Duration kHour{3'600'000};

engine::RegisterBranchRequest Branch(const std::string& gid, const std::string& id) {
  return {gid, id, R"({"amount":30})", "http://p/confirm" + id, "http://p/cancel" + id};
}

TEST_CASE("a paused saga makes no call, even after a restart, and resumes at once",
          "[coordinator][pause]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown(), Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  REQUIRE(h.caller().calls().size() == 1);

  REQUIRE(h.coordinator().Pause("s1").ok());
  const storage::Transaction paused = h.Load("s1");
  REQUIRE(paused.global.paused);
  CHECK(paused.global.paused->by == "on-call");
  CHECK(paused.global.paused->reason == "ledger bug, OPS-9");
  CHECK(paused.global.status == GlobalStatus::kSubmitted);
  h.Advance(kHour);
  CHECK(h.caller().calls().size() == 1);
  // Retry now does not bypass a pause.
  REQUIRE(h.coordinator().ResetNextCronTime("s1").ok());
  CHECK(h.caller().calls().size() == 1);
  h.Restart();
  h.Advance(kHour);
  CHECK(h.caller().calls().size() == 1);
  CHECK(h.StatusOf("s1") == GlobalStatus::kSubmitted);

  // Resumed: its pending call goes out at once, whatever its retry time said.
  REQUIRE(h.coordinator().Resume("s1").ok());
  CHECK_FALSE(h.Load("s1").global.paused);
  CHECK(h.caller().calls().size() == 2);
  h.Advance(kHour);
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
}

TEST_CASE("a paused TCC does not time out, and a submit is accepted and acted on at resume",
          "[coordinator][pause]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());
  REQUIRE(h.coordinator().Pause("t1").ok());
  // A branch registered while paused is stored; its transaction stays prepared past its
  // timeout_to_fail.
  REQUIRE(h.coordinator().RegisterBranch(Branch("t1", "01")).ok());
  h.Advance(kHour);
  CHECK(h.StatusOf("t1") == GlobalStatus::kPrepared);
  CHECK(h.caller().calls().empty());

  REQUIRE(h.coordinator().Submit({"t1", TransType::kTcc, {}, {}}).ok());
  CHECK(h.StatusOf("t1") == GlobalStatus::kSubmitted);
  h.Advance(kHour);
  CHECK(h.caller().calls().empty());

  REQUIRE(h.coordinator().Resume("t1").ok());
  CHECK(h.caller().CallNames() == Names{"01:confirm"});
  CHECK(h.StatusOf("t1") == GlobalStatus::kSucceed);
}

TEST_CASE("a pause during a pass records the call in flight and makes no further call",
          "[coordinator][pause]") {
  CoordinatorHarness h;
  bool paused = false;
  h.caller().on_call = [&](const engine::BranchCall&) {
    if (paused) return;
    paused = true;
    REQUIRE(h.coordinator().Pause("s1").ok());
  };
  REQUIRE(h.coordinator().Submit(Saga("s1", 2)).ok());
  // The first action was out when the pause came: its success is stored, the second never
  // starts.
  CHECK(h.caller().CallNames() == Names{"01:action"});
  h.Advance(kHour);
  CHECK(h.caller().CallNames() == Names{"01:action"});
  const storage::Transaction tx = h.Load("s1");
  CHECK(tx.global.paused);
  for (const storage::BranchRecord& b : tx.branches) {
    if (b.branch_id == "01" && b.op == BranchOp::kAction) CHECK(b.status == BranchStatus::kSucceed);
  }

  REQUIRE(h.coordinator().Resume("s1").ok());
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action"});
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
}

TEST_CASE("a paused transaction that is force-stopped leaves no pause signal behind",
          "[coordinator][pause]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  REQUIRE(h.coordinator().Pause("s1").ok());
  CHECK(h.pauses().IsSignalled("s1"));
  REQUIRE(h.coordinator().ForceStop("s1", "refunded by hand").ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kFailed);
  // Its last pass found it finished: nothing will read the signal again, so it is gone.
  CHECK_FALSE(h.pauses().IsSignalled("s1"));
}

TEST_CASE("pause and resume refuse what they cannot do, by name, and change nothing",
          "[coordinator][pause]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("done", 1)).ok());
  REQUIRE(h.StatusOf("done") == GlobalStatus::kSucceed);
  REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());

  CHECK(h.coordinator().Pause("nobody").code() == StatusCode::kNotFound);
  CHECK(h.coordinator().Resume("nobody").code() == StatusCode::kNotFound);
  CHECK(h.coordinator().Pause("done").code() == StatusCode::kConflict);
  CHECK(h.coordinator().Resume("t1").code() == StatusCode::kConflict);
  const Status no_reason = h.coordinator().Pause("t1", "");
  CHECK(no_reason.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(no_reason.message(), Catch::StartsWith("reason: required"));
  CHECK(h.coordinator().Pause("bad/gid").code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(h.Load("t1").global.paused);

  REQUIRE(h.coordinator().Pause("t1").ok());
  CHECK(h.coordinator().Pause("t1").code() == StatusCode::kConflict);
  CHECK(h.coordinator().Resume("t1", "").code() == StatusCode::kInvalidArgument);
  CHECK(h.Load("t1").global.paused);
}

TEST_CASE("every pause and resume is in the audit trail with who, what and why",
          "[coordinator][pause][audit]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());
  REQUIRE(h.coordinator().Pause("t1", "participant bug", "alice").ok());
  REQUIRE(h.coordinator().Resume("t1", "fixed in 2.3.1", "bob").ok());
  // A refused one is not.
  REQUIRE(h.coordinator().Resume("t1", "again", "carol").code() == StatusCode::kConflict);

  auto page = h.store().ListAudit(storage::AuditQuery{});
  REQUIRE(page);
  REQUIRE(page->entries.size() == 2);
  CHECK(page->entries[0].action == "resume");
  CHECK(page->entries[0].actor == "bob");
  CHECK(page->entries[0].reason == "fixed in 2.3.1");
  CHECK(page->entries[1].action == "pause");
  CHECK(page->entries[1].actor == "alice");
  CHECK(page->entries[1].gid == "t1");
}

TEST_CASE("a force stop ends a paused transaction", "[coordinator][pause]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  REQUIRE(h.coordinator().Pause("s1").ok());
  REQUIRE(h.coordinator().ForceStop("s1", "given up").ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kFailed);
  CHECK(h.coordinator().Resume("s1").code() == StatusCode::kConflict);
  h.Advance(kHour);
  CHECK(h.caller().calls().size() == 1);
}

// The pause-after policy: a branch that failed its limit of times in a row parks the transaction.
engine::RetrySettings PauseAfter(int failures) {
  engine::RetrySettings retry{Duration(60'000), 10};
  retry.pause_after = failures;
  return retry;
}

TEST_CASE("after --pause-after failures of a branch the transaction is parked and alerted once",
          "[coordinator][pause][policy]") {
  CoordinatorHarness h(PauseAfter(3));
  h.caller().Script("01", BranchOp::kAction, std::vector<engine::BranchOutcome>(4, Unknown()));
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  h.Advance(kHour);
  h.Advance(kHour);
  REQUIRE(h.caller().calls().size() == 3);
  const storage::Transaction parked = h.Load("s1");
  REQUIRE(parked.global.paused);
  CHECK(parked.global.paused->by == "policy");
  CHECK_THAT(parked.global.paused->reason,
             Catch::StartsWith("branch 01 (action) at http://p:80 failed 3 times in a row: "));
  CHECK(parked.global.status == GlobalStatus::kSubmitted);
  REQUIRE(h.parked().size() == 1);
  CHECK(h.parked()[0].global.gid == "s1");
  h.Advance(kHour);
  h.Restart();
  h.Advance(kHour);
  CHECK(h.caller().calls().size() == 3);
  CHECK(h.parked().size() == 1);

  // Resumed and still failing: parked again at its next failure, and alerted again.
  REQUIRE(h.coordinator().Resume("s1").ok());
  CHECK(h.caller().calls().size() == 4);
  CHECK(h.Load("s1").global.paused);
  CHECK(h.parked().size() == 2);
  // Resumed once the participant is fixed: it finishes.
  REQUIRE(h.coordinator().Resume("s1").ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  CHECK(h.caller().calls().size() == 5);
}

TEST_CASE("a transaction's custom_data pause_after overrides the server's, 0 meaning never",
          "[coordinator][pause][policy]") {
  CoordinatorHarness h(PauseAfter(2));
  h.caller().Script("01", BranchOp::kAction, std::vector<engine::BranchOutcome>(5, Unknown()));
  engine::SubmitRequest never = Saga("never", 1);
  never.options.pause_after = 0;
  REQUIRE(h.coordinator().Submit(never).ok());
  for (int i = 0; i < 5; ++i) h.Advance(kHour);
  CHECK_FALSE(h.Load("never").global.paused);
  CHECK(h.StatusOf("never") == GlobalStatus::kSucceed);  // its sixth call succeeded

  CoordinatorHarness server_never(PauseAfter(0));
  server_never.caller().Script("01", BranchOp::kAction,
                               std::vector<engine::BranchOutcome>(5, Unknown()));
  engine::SubmitRequest own = Saga("own", 1);
  own.options.pause_after = 1;
  REQUIRE(server_never.coordinator().Submit(own).ok());
  CHECK(server_never.Load("own").global.paused);
  CHECK(server_never.caller().calls().size() == 1);
}

TEST_CASE("a call that answers ONGOING or FAILURE does not park the transaction",
          "[coordinator][pause][policy]") {
  CoordinatorHarness h(PauseAfter(1));
  h.caller().Script("01", BranchOp::kConfirm, {testing::Ongoing(), testing::Ongoing()});
  REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());
  REQUIRE(h.coordinator().RegisterBranch(Branch("t1", "01")).ok());
  REQUIRE(h.coordinator().Submit({"t1", TransType::kTcc, {}, {}}).ok());
  h.Advance(kHour);
  h.Advance(kHour);
  CHECK_FALSE(h.Load("t1").global.paused);
  CHECK(h.StatusOf("t1") == GlobalStatus::kSucceed);
  // A saga action's FAILURE compensates: nothing to park.
  h.caller().Script("01", BranchOp::kAction, {testing::Failure()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kFailed);
  CHECK(h.parked().empty());
}

}  // namespace
}  // namespace settle::drive
