// An operator's pause and resume of one transaction (Coordinator::Pause, Resume): a paused
// transaction makes no call, is not retried and does not time out, across a restart; the
// client's requests are accepted and acted on at resume; a call in flight when it is paused is
// recorded, and nothing after it goes out; every pause and resume is audited.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "settle/drive/coordinator.h"
#include "transaction_builder.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Unknown;
using Names = std::vector<std::string>;

constexpr Duration kHour{3'600'000};

engine::SubmitRequest Saga(const std::string& gid, int steps) {
  engine::SubmitRequest r{gid, TransType::kSaga, {}, {}};
  for (int i = 0; i < steps; ++i) {
    r.steps.push_back({"http://p/action", "http://p/compensate"});
    r.payloads.push_back(R"({"amount":30})");
  }
  return r;
}

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

}  // namespace
}  // namespace settle::drive
