// An operator resolves a pending branch call by hand, or sends it to another url
// (Coordinator::Resolve, Redirect): the transaction goes on as if the participant had answered
// so, or calls the new url at once; only pending calls, only what the protocol allows, and a
// pass with the call out loses to the operator.
#include <catch2/catch.hpp>

#include <algorithm>
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

void StartTcc(CoordinatorHarness& h, const std::string& gid) {
  REQUIRE(h.coordinator().Prepare({gid, {}}).ok());
  REQUIRE(
      h.coordinator()
          .RegisterBranch({gid, "01", R"({"amount":30})", "http://p/confirm", "http://p/cancel"})
          .ok());
}

Status Resolve(CoordinatorHarness& h, const std::string& gid, const std::string& branch,
               const std::string& op, const std::string& outcome,
               const std::string& reason = "applied by hand, OPS-12") {
  return h.coordinator().Resolve(
      engine::ResolveRequest{gid, branch, op, outcome, reason, "on-call"});
}

Status Redirect(CoordinatorHarness& h, const std::string& gid, const std::string& branch,
                const std::string& op, const std::string& url,
                const std::string& reason = "moved to the new cluster") {
  return h.coordinator().Redirect(engine::RedirectRequest{gid, branch, op, url, reason, "on-call"});
}

const storage::BranchRecord& Row(const storage::Transaction& tx, const std::string& branch,
                                 BranchOp op) {
  for (const auto& b : tx.branches) {
    if (b.branch_id == branch && b.op == op) return b;
  }
  FAIL("no row " << branch << " " << ToString(op));
  return tx.branches.front();
}

TEST_CASE("a saga action resolved as succeed lets the saga go on without calling it again",
          "[coordinator][resolve]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown(), Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 2)).ok());
  REQUIRE(h.caller().CallNames() == Names{"01:action"});
  REQUIRE(Resolve(h, "s1", "01", "action", "succeed").ok());
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action"});
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
}

TEST_CASE("a saga action resolved as failed compensates the saga", "[coordinator][resolve]") {
  CoordinatorHarness h;
  h.caller().Script("02", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 2)).ok());
  REQUIRE(h.caller().CallNames() == Names{"01:action", "02:action"});
  REQUIRE(Resolve(h, "s1", "02", "action", "failed").ok());
  h.Advance(kHour);
  CHECK(h.StatusOf("s1") == GlobalStatus::kFailed);
  const Names calls = h.caller().CallNames();
  CHECK(std::count(calls.begin(), calls.end(), "01:compensate") == 1);
  CHECK(std::count(calls.begin(), calls.end(), "02:action") == 1);
}

TEST_CASE("a confirm applied by hand is resolved as succeed and the TCC succeeds",
          "[coordinator][resolve]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kConfirm, std::vector<engine::BranchOutcome>(3, Unknown()));
  StartTcc(h, "t1");
  REQUIRE(h.coordinator().Submit({"t1", TransType::kTcc, {}, {}}).ok());
  REQUIRE(h.caller().CallNames() == Names{"01:confirm"});
  // A confirm cannot be marked failed: a failed confirm is retried by design.
  const Status failed = Resolve(h, "t1", "01", "confirm", "failed");
  CHECK(failed.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(failed.message(),
             Catch::StartsWith("outcome: a confirm can only be resolved as succeed"));
  REQUIRE(Resolve(h, "t1", "01", "confirm", "succeed").ok());
  CHECK(h.StatusOf("t1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:confirm"});
  // Done now: not pending any more, and the transaction is finished.
  CHECK(Resolve(h, "t1", "01", "confirm", "succeed").code() == StatusCode::kConflict);
  auto page = h.store().ListAudit(storage::AuditQuery{});
  REQUIRE(page);
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].action == "resolve");
  CHECK(page->entries[0].target == "branch 01 confirm");
  CHECK(page->entries[0].parameters == R"({"branch_id":"01","op":"confirm","outcome":"succeed"})");
}

TEST_CASE("an operator's resolution wins over a pass whose call is out", "[coordinator][resolve]") {
  CoordinatorHarness h;
  StartTcc(h, "t1");
  bool resolved = false;
  h.caller().on_call = [&](const engine::BranchCall&) {
    if (resolved) return;
    resolved = true;
    REQUIRE(Resolve(h, "t1", "01", "confirm", "succeed").ok());
  };
  REQUIRE(h.coordinator().Submit({"t1", TransType::kTcc, {}, {}}).ok());
  h.Advance(kHour);
  CHECK(h.StatusOf("t1") == GlobalStatus::kSucceed);
  CHECK(Row(h.Load("t1"), "01", BranchOp::kConfirm).attempts == 0);  // the pass's answer lost
  CHECK(h.caller().CallNames() == Names{"01:confirm"});
}

TEST_CASE("resolve refuses what it cannot do, by name", "[coordinator][resolve]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  CHECK(Resolve(h, "nobody", "01", "action", "succeed").code() == StatusCode::kNotFound);
  const Status no_row = Resolve(h, "s1", "07", "action", "succeed");
  CHECK(no_row.code() == StatusCode::kNotFound);
  CHECK_THAT(no_row.message(), Catch::Contains("branch 07 (action)"));
  CHECK_THAT(Resolve(h, "s1", "01", "act", "succeed").message(), Catch::StartsWith("op: "));
  CHECK_THAT(Resolve(h, "s1", "01", "action", "done").message(), Catch::StartsWith("outcome: "));
  CHECK_THAT(Resolve(h, "s1", "01", "action", "succeed", "").message(),
             Catch::StartsWith("reason: required"));
  CHECK_THAT(Resolve(h, "s1", "", "action", "succeed").message(),
             Catch::StartsWith("branch_id: required"));
  // A compensate that was never due is not pending work either way; once the saga is done,
  // nothing is pending.
  REQUIRE(Resolve(h, "s1", "01", "action", "succeed").ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  CHECK(Resolve(h, "s1", "01", "compensate", "succeed").code() == StatusCode::kConflict);
}

TEST_CASE("a call the transaction has not reached cannot be resolved", "[coordinator][resolve]") {
  CoordinatorHarness h;
  // A saga retrying its first step: its second step and every compensate are not reached.
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 2)).ok());
  for (const auto& [branch, op] :
       {std::pair{"02", "action"}, {"01", "compensate"}, {"02", "compensate"}}) {
    INFO(branch << " " << op);
    const Status refused = Resolve(h, "s1", branch, op, "succeed");
    CHECK(refused.code() == StatusCode::kConflict);
    CHECK_THAT(refused.message(), Catch::Contains("has not reached it"));
  }
  // A TCC's confirm before its submit: the client may still abort.
  StartTcc(h, "t1");
  CHECK(Resolve(h, "t1", "01", "confirm", "succeed").code() == StatusCode::kConflict);
  CHECK(Resolve(h, "t1", "01", "cancel", "succeed").code() == StatusCode::kConflict);
  CHECK(h.StatusOf("t1") == GlobalStatus::kPrepared);
  // The retried first step is pending, reached.
  CHECK(Resolve(h, "s1", "01", "action", "succeed").ok());
}

TEST_CASE("a redirected call goes to its new url at once, and only a pending one may be",
          "[coordinator][redirect]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  REQUIRE(h.caller().calls().size() == 1);

  CHECK_THAT(Redirect(h, "s1", "01", "action", "not a url").message(), Catch::StartsWith("url: "));
  CHECK_THAT(Redirect(h, "s1", "01", "action", "http://q/action?gid=other").message(),
             Catch::StartsWith("url: "));
  CHECK(Redirect(h, "s1", "09", "action", "http://q/action").code() == StatusCode::kNotFound);
  REQUIRE(Redirect(h, "s1", "01", "action", "http://q:8080/v2/action").ok());
  REQUIRE(h.caller().calls().size() == 2);
  CHECK(h.caller().calls()[1].url == "http://q:8080/v2/action");
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  const storage::Transaction tx = h.Load("s1");
  CHECK(Row(tx, "01", BranchOp::kAction).url == "http://q:8080/v2/action");
  CHECK(Row(tx, "01", BranchOp::kAction).data == R"({"amount":30})");
  CHECK(Row(tx, "01", BranchOp::kCompensate).url == "http://p/compensate");
  // Done: no longer pending.
  CHECK(Redirect(h, "s1", "01", "action", "http://r/action").code() == StatusCode::kConflict);

  auto page = h.store().ListAudit(storage::AuditQuery{});
  REQUIRE(page);
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].action == "redirect");
  CHECK(
      page->entries[0].parameters ==
      R"({"branch_id":"01","from":"http://p/action","op":"action","to":"http://q:8080/v2/action"})");
}

// The pass whose call to the old url is out stores that call's outcome after the redirect:
// it must not put the row back to its backoff (an hour) over the redirect's "now", nor count the
// old host's answer against the new url.
TEST_CASE(
    "a redirect made while a call to the old url is out sends the call to the new url at once",
    "[coordinator][redirect]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  bool redirected = false;
  h.caller().on_call = [&](const engine::BranchCall&) {
    if (redirected) return;
    redirected = true;
    REQUIRE(Redirect(h, "s1", "01", "action", "http://q/action").ok());
  };
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  // No time passes: the new url is called as soon as the old call's pass ends.
  h.Advance(Duration(0));
  REQUIRE(h.caller().calls().size() == 2);
  CHECK(h.caller().calls()[0].url == "http://p/action");
  CHECK(h.caller().calls()[1].url == "http://q/action");
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  const storage::BranchRecord& row = Row(h.Load("s1"), "01", BranchOp::kAction);
  CHECK(row.url == "http://q/action");
  CHECK(row.attempts == 1);  // the new url's: the old one's answer was not stored
  CHECK(row.failures == 0);
}

TEST_CASE("a Retry now made while a call is out makes the row due at once, not at its backoff",
          "[coordinator][redirect]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  bool retried = false;
  h.caller().on_call = [&](const engine::BranchCall&) {
    if (retried) return;
    retried = true;
    h.clock().Advance(Duration(5));  // the call takes a while
    REQUIRE(h.coordinator().ResetNextCronTime("s1").ok());
  };
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  h.Advance(Duration(0));
  REQUIRE(h.caller().calls().size() == 2);
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
}

}  // namespace
}  // namespace settle::drive
