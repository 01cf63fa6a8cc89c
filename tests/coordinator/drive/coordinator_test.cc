#include "settle/drive/coordinator.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include <set>
#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "saga_requests.h"
#include "transaction_builder.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Failure;
using testing::Ongoing;
using testing::Saga;
using testing::Unknown;
using Names = std::vector<std::string>;

constexpr Duration kSecond{1000};

engine::RegisterBranchRequest Branch(const std::string& gid, const std::string& id) {
  return {gid, id, R"({"amount":30})", "http://p/confirm" + id, "http://p/cancel" + id};
}

// Prepares a TCC and registers branches "01".."0n" as a client SDK would.
void StartTcc(CoordinatorHarness& h, const std::string& gid, int branches,
              engine::RequestOptions options = {}) {
  REQUIRE(h.coordinator().Prepare({gid, options}).ok());
  for (int i = 1; i <= branches; ++i) {
    REQUIRE(h.coordinator().RegisterBranch(Branch(gid, BranchIdForIndex(i - 1))).ok());
  }
}

engine::SubmitRequest TccSubmit(const std::string& gid, bool wait_result = false) {
  engine::SubmitRequest r{gid, TransType::kTcc, {}, {}};
  r.options.wait_result = wait_result;
  return r;
}

TEST_CASE("a submitted TCC confirms every branch and succeeds", "[coordinator][tcc]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 2);
  CHECK(h.caller().calls().empty());  // nothing happens before submit
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:confirm", "02:confirm"});
  const auto call = h.caller().calls()[0];
  CHECK(call.url == "http://p/confirm01");
  CHECK(call.data == R"({"amount":30})");
  CHECK(call.trans_type == TransType::kTcc);
  CHECK(h.Load("g1").global.finish_time);
}

TEST_CASE("a TCC submit reads the transaction once and writes it twice", "[coordinator][tcc]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 2);
  const int commits = h.faulty_store().commits();
  const int loads = h.faulty_store().loads();

  REQUIRE(h.coordinator().Submit(TccSubmit("g1", /*wait_result=*/true)).ok());

  // The status change, then the end with every confirm's outcome; the pass starts from the
  // rows the status change stored.
  CHECK(h.faulty_store().commits() - commits == 2);
  CHECK(h.faulty_store().loads() - loads == 1);
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
}

TEST_CASE("a branch registered while the submit is being stored is confirmed too",
          "[coordinator][tcc]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 2);
  // Lands after the submit has read the transaction and before its status change commits, as
  // a late registerBranch on another connection would.
  h.faulty_store().BeforeNextCommit(
      [&h] { REQUIRE(h.coordinator().RegisterBranch(Branch("g1", "03")).ok()); });

  REQUIRE(h.coordinator().Submit(TccSubmit("g1", /*wait_result=*/true)).ok());

  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:confirm", "02:confirm", "03:confirm"});
}

TEST_CASE("an aborted TCC cancels every registered branch and fails", "[coordinator][tcc]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 2);
  REQUIRE(h.coordinator().Abort({"g1", "Try of 02 failed", false}).ok());
  const auto tx = h.Load("g1");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK(tx.global.rollback_reason == "Try of 02 failed");
  CHECK(h.caller().CallNames() == Names{"01:cancel", "02:cancel"});
}

TEST_CASE("a TCC nobody submits is aborted at timeout_to_fail", "[coordinator][tcc]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.timeout_to_fail = 10 * kSecond;
  StartTcc(h, "g1", 1, options);
  h.Advance(9 * kSecond);
  CHECK(h.StatusOf("g1") == GlobalStatus::kPrepared);
  h.Advance(kSecond);
  const auto tx = h.Load("g1");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK_THAT(tx.global.rollback_reason, Catch::Contains("timeout_to_fail"));
  CHECK(h.caller().CallNames() == Names{"01:cancel"});
}

TEST_CASE("a TCC without timeout_to_fail gets the server's default", "[coordinator][tcc]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 1);
  h.Advance(34 * kSecond);
  CHECK(h.StatusOf("g1") == GlobalStatus::kPrepared);
  h.Advance(kSecond);
  CHECK(h.StatusOf("g1") == GlobalStatus::kFailed);
}

TEST_CASE("a saga runs its actions in order and succeeds", "[coordinator][saga]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("s1", 3)).ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action", "03:action"});
}

TEST_CASE("a saga stores each action's success before the next action starts",
          "[coordinator][saga]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("s1", 3)).ok());
  // At submit, 01's success before 02 starts, 02's before 03, and 03's with the end: an abort
  // after a crash knows from storage every action that may have started.
  CHECK(h.faulty_store().commits() == 4);
  // Its pass started from the rows the submit stored, without reading them back.
  CHECK(h.faulty_store().loads() == 0);
  auto tx = h.Load("s1");
  for (const char* step : {"01", "02", "03"}) {
    const auto& action = testing::RowOf(tx, step, BranchOp::kAction);
    CHECK(action.status == BranchStatus::kSucceed);
    CHECK(action.attempts == 1);
  }
}

TEST_CASE("a concurrent saga is written twice: at submit, and at its end with every outcome",
          "[coordinator][saga]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.concurrent = true;
  REQUIRE(h.coordinator().Submit(Saga("s1", 3, options)).ok());
  CHECK(h.faulty_store().commits() == 2);
  auto tx = h.Load("s1");
  for (const char* step : {"01", "02", "03"}) {
    CHECK(testing::RowOf(tx, step, BranchOp::kAction).status == BranchStatus::kSucceed);
  }
}

TEST_CASE("a saga longer than one pass's rounds stores what it learnt and goes on in the next pass",
          "[coordinator][saga]") {
  CoordinatorHarness h;
  const int steps = TransactionDriver::kMaxRoundsPerPass + 6;
  REQUIRE(h.coordinator().Submit(Saga("s1", steps)).ok());
  // The first pass called its rounds' worth of steps and stored their outcomes.
  auto tx = h.Load("s1");
  CHECK(testing::RowOf(tx, "64", BranchOp::kAction).status == BranchStatus::kSucceed);
  h.Advance(Duration(0));
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  Names expected;
  for (int i = 1; i <= steps; ++i) {
    expected.push_back((i < 10 ? "0" : "") + std::to_string(i) + ":action");
  }
  CHECK(h.caller().CallNames() == expected);  // every step once, in order
}

TEST_CASE("steps whose outcomes a crash lost are called again after the restart",
          "[coordinator][saga][crash]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.concurrent = true;
  // The calls "crash" the coordinator: nothing more can be stored.
  h.caller().on_call = [&](const engine::BranchCall& call) {
    if (call.branch_id == "02") h.faulty_store().FailCommits(true);
  };
  REQUIRE(h.coordinator().Submit(Saga("s1", 2, options)).ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSubmitted);
  h.caller().on_call = nullptr;
  h.faulty_store().FailCommits(false);
  h.Restart();
  h.Advance(kSecond);
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action", "01:action", "02:action"});
}

TEST_CASE("a saga aborted after a crash compensates the action that started last",
          "[coordinator][saga][crash]") {
  // Step 02 starts, then the coordinator crashes before storing anything more. After the
  // restart every action call fails until the saga times out: 02 started (01's success was
  // stored before it went out), so it is compensated, before 01. Had 02 gone out on an
  // unstored success, storage would say only 01 may have started (01 would be called again,
  // fail, and be the only step compensated) and 02's action would stay done at its
  // participant, never compensated (found by tests/simulation, seed 7).
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.timeout_to_fail = 10 * kSecond;
  h.caller().on_call = [&](const engine::BranchCall& call) {
    if (call.branch_id == "02") h.faulty_store().FailCommits(true);
  };
  std::vector<engine::BranchOutcome> first_then_errors(20, Unknown());
  first_then_errors.front() = engine::BranchOutcome{BranchResult::kSuccess, 200, ""};
  h.caller().Script("01", BranchOp::kAction, first_then_errors);
  h.caller().Script("02", BranchOp::kAction, std::vector<engine::BranchOutcome>(20, Unknown()));
  REQUIRE(h.coordinator().Submit(Saga("s1", 2, options)).ok());
  h.caller().on_call = nullptr;
  h.faulty_store().FailCommits(false);
  h.Restart();
  for (int i = 0; i < 12 && h.StatusOf("s1") != GlobalStatus::kFailed; ++i) h.Advance(kSecond * 2);
  CHECK(h.StatusOf("s1") == GlobalStatus::kFailed);
  Names calls = h.caller().CallNames();
  REQUIRE(calls.size() >= 2);
  CHECK(Names(calls.end() - 2, calls.end()) == Names{"02:compensate", "01:compensate"});
  CHECK(std::count(calls.begin(), calls.end(), "01:action") == 1);
}

TEST_CASE("a failed saga compensates the started steps, the failed one included, in reverse",
          "[coordinator][saga]") {
  CoordinatorHarness h;
  h.caller().Script("02", BranchOp::kAction, {Failure()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 3)).ok());
  const auto tx = h.Load("s1");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK_THAT(tx.global.rollback_reason, Catch::Contains("branch 02 action failed"));
  CHECK(h.caller().CallNames() ==
        Names{"01:action", "02:action", "02:compensate", "01:compensate"});
}

TEST_CASE("a concurrent saga honours orders", "[coordinator][saga]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.concurrent = true;
  options.orders = {{2, {0, 1}}};
  REQUIRE(h.coordinator().Submit(Saga("s1", 3, options)).ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action", "03:action"});
}

TEST_CASE("failed calls are retried with a doubling backoff until they succeed",
          "[coordinator][retry]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kConfirm, {Unknown(), Unknown("connection refused")});
  StartTcc(h, "g1", 1);
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  const TimePoint t0 = h.clock().Now();
  auto first = h.Load("g1");
  const auto& row = testing::RowOf(first, "01", BranchOp::kConfirm);
  CHECK(row.failures == 1);
  CHECK(row.next_retry_at == t0 + kSecond);
  CHECK(h.scheduler().DueTime("g1") == t0 + kSecond);

  h.Advance(kSecond);  // second attempt fails: the wait doubles
  CHECK(h.scheduler().DueTime("g1") == t0 + 3 * kSecond);
  h.Advance(kSecond);
  CHECK(h.caller().calls().size() == 2);  // not due yet
  h.Advance(kSecond);
  auto tx = h.Load("g1");
  CHECK(tx.global.status == GlobalStatus::kSucceed);
  const auto& confirm = testing::RowOf(tx, "01", BranchOp::kConfirm);
  CHECK(confirm.attempts == 3);
  // The success clears its last error; the failed calls stay in its history.
  CHECK(confirm.last_error.empty());
  REQUIRE(confirm.failed_attempts.size() == 2);
  CHECK_THAT(confirm.failed_attempts[1].error, Catch::Contains("connection refused"));
}

TEST_CASE("ONGOING is asked again after the same interval", "[coordinator][retry]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Ongoing(), Ongoing()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  const TimePoint t0 = h.clock().Now();
  CHECK(h.scheduler().DueTime("s1") == t0 + kSecond);
  h.Advance(kSecond);
  CHECK(h.scheduler().DueTime("s1") == t0 + 2 * kSecond);
  h.Advance(kSecond);
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
}

TEST_CASE("a branch that keeps failing flags its transaction stuck until it completes",
          "[coordinator][retry]") {
  CoordinatorHarness h({Duration(60'000), 3});
  h.caller().Script("01", BranchOp::kConfirm, {Failure(), Failure(), Failure()});
  StartTcc(h, "g1", 1);
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  h.Advance(kSecond);
  CHECK_FALSE(h.Load("g1").global.stuck);
  h.Advance(2 * kSecond);
  auto stuck = h.Load("g1");
  CHECK(stuck.global.stuck);
  CHECK(stuck.global.status == GlobalStatus::kSubmitted);
  CHECK_THAT(testing::RowOf(stuck, "01", BranchOp::kConfirm).last_error,
             Catch::Contains("participant bug"));
  h.Advance(4 * kSecond);  // retries never give up: this one succeeds
  auto done = h.Load("g1");
  CHECK(done.global.status == GlobalStatus::kSucceed);
  CHECK_FALSE(done.global.stuck);
}

TEST_CASE("a saga action that keeps erroring aborts the saga at retry_limit",
          "[coordinator][retry]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.retry_limit = 2;
  h.caller().Script("02", BranchOp::kAction, {Unknown(), Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 2, options)).ok());
  h.Advance(kSecond);
  CHECK(h.StatusOf("s1") == GlobalStatus::kFailed);
  CHECK(h.caller().CallNames() ==
        Names{"01:action", "02:action", "02:action", "02:compensate", "01:compensate"});
}

TEST_CASE("a saga still running at timeout_to_fail is aborted and compensated",
          "[coordinator][saga]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.timeout_to_fail = 5 * kSecond;
  h.caller().Script("02", BranchOp::kAction, std::vector<engine::BranchOutcome>(10, Unknown()));
  REQUIRE(h.coordinator().Submit(Saga("s1", 2, options)).ok());
  for (int i = 0; i < 5; ++i) h.Advance(kSecond);
  const auto tx = h.Load("s1");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK_THAT(tx.global.rollback_reason, Catch::Contains("timeout_to_fail"));
  const Names calls = h.caller().CallNames();
  CHECK(Names(calls.end() - 2, calls.end()) == Names{"02:compensate", "01:compensate"});
}

TEST_CASE("wait_result answers with the outcome of one pass", "[coordinator][wait]") {
  CoordinatorHarness h;
  engine::RequestOptions wait;
  wait.wait_result = true;
  CHECK(h.coordinator().Submit(Saga("ok", 2, wait)).ok());

  h.caller().Script("01", BranchOp::kAction, {Failure()});
  const Status failed = h.coordinator().Submit(Saga("failed", 2, wait));
  CHECK(failed.code() == StatusCode::kConflict);
  CHECK_THAT(failed.message(), Catch::Contains("action failed"));

  h.caller().Script("01", BranchOp::kAction, {Unknown("HTTP 503: busy")});
  const Status pending = h.coordinator().Submit(Saga("pending", 2, wait));
  CHECK(pending.code() == StatusCode::kPending);
  CHECK_THAT(pending.message(), Catch::Contains("submitted") && Catch::Contains("busy"));
}

TEST_CASE("duplicate prepare, submit and abort are idempotent, late ones are refused",
          "[coordinator][idempotency]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kConfirm, {Unknown()});
  StartTcc(h, "g1", 1);
  CHECK(h.coordinator().Prepare({"g1", {}}).ok());
  CHECK(h.coordinator().RegisterBranch(Branch("g1", "01")).ok());
  engine::RegisterBranchRequest other_url = Branch("g1", "01");
  other_url.confirm_url = "http://elsewhere/confirm";
  CHECK(h.coordinator().RegisterBranch(other_url).code() == StatusCode::kConflict);

  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  CHECK(h.coordinator().Submit(TccSubmit("g1")).ok());  // still submitted: re-driven
  CHECK(h.coordinator().Prepare({"g1", {}}).code() == StatusCode::kConflict);
  CHECK(h.coordinator().Abort({"g1", "", false}).code() == StatusCode::kConflict);
  h.Advance(kSecond);
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
  CHECK(h.coordinator().Submit(TccSubmit("g1")).code() == StatusCode::kConflict);
  // Each confirm went out once per attempt, never twice for one attempt.
  CHECK(h.caller().CallNames() == Names{"01:confirm", "01:confirm"});

  h.caller().Script("01", BranchOp::kCancel, {Unknown()});
  StartTcc(h, "g2", 1);
  REQUIRE(h.coordinator().Abort({"g2", "", false}).ok());
  REQUIRE(h.StatusOf("g2") == GlobalStatus::kAborting);
  CHECK(h.coordinator().Abort({"g2", "", false}).ok());  // still aborting: a no-op
  CHECK(h.coordinator().Submit(TccSubmit("g2")).code() == StatusCode::kConflict);
  CHECK(h.coordinator().RegisterBranch(Branch("g2", "02")).code() == StatusCode::kConflict);
  h.Advance(kSecond);
  REQUIRE(h.StatusOf("g2") == GlobalStatus::kFailed);
  CHECK(h.coordinator().Abort({"g2", "", false}).code() == StatusCode::kConflict);

  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  CHECK(h.coordinator().Submit(Saga("s1", 1)).code() == StatusCode::kConflict);  // succeed
}

TEST_CASE("operations on unknown gids or the wrong type are refused", "[coordinator]") {
  CoordinatorHarness h;
  CHECK(h.coordinator().Submit(TccSubmit("nope")).code() == StatusCode::kNotFound);
  CHECK(h.coordinator().Abort({"nope", "", false}).code() == StatusCode::kNotFound);
  CHECK(h.coordinator().RegisterBranch(Branch("nope", "01")).code() == StatusCode::kNotFound);
  CHECK(h.coordinator().ForceStop("nope").code() == StatusCode::kNotFound);
  CHECK(h.coordinator().ResetNextCronTime("nope").code() == StatusCode::kNotFound);
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  CHECK(h.coordinator().Abort({"s1", "", false}).code() == StatusCode::kConflict);
  CHECK(h.coordinator().Prepare({"s1", {}}).code() == StatusCode::kConflict);
  StartTcc(h, "g1", 0);
  CHECK(h.coordinator().Submit(Saga("g1", 1)).code() == StatusCode::kConflict);
  auto missing = h.coordinator().Query("nope");
  REQUIRE(missing);
  CHECK_FALSE(missing->has_value());
}

TEST_CASE("forceStop fails an unfinished transaction and its retries stop",
          "[coordinator][operator]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kConfirm, std::vector<engine::BranchOutcome>(10, Unknown()));
  StartTcc(h, "g1", 1);
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  REQUIRE(h.coordinator().ForceStop("g1").ok());
  const auto calls = h.caller().calls().size();
  h.Advance(60 * kSecond);
  CHECK(h.caller().calls().size() == calls);
  CHECK(h.StatusOf("g1") == GlobalStatus::kFailed);
  CHECK_FALSE(h.scheduler().DueTime("g1"));
  CHECK(h.coordinator().ForceStop("g1").code() == StatusCode::kConflict);
}

TEST_CASE(
    "forceStop of a rolling-back transaction keeps why it rolled back and adds who stopped it",
    "[coordinator][operator]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kCancel, std::vector<engine::BranchOutcome>(10, Unknown()));
  StartTcc(h, "g1", 1);
  REQUIRE(h.coordinator().Abort({"g1", "out of stock", false}).ok());
  REQUIRE(h.StatusOf("g1") == GlobalStatus::kAborting);
  REQUIRE(h.coordinator().ForceStop("g1", "cancelled by hand", "on-call").ok());
  CHECK(h.Load("g1").global.rollback_reason ==
        "out of stock; then stopped by an operator (forceStop by on-call): cancelled by hand");
}

TEST_CASE("an operator's forceStop during a pass is not overwritten by the pass",
          "[coordinator][operator]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 1);
  bool stopped = false;
  h.caller().on_call = [&](const engine::BranchCall&) {
    if (stopped) return;
    stopped = true;
    REQUIRE(h.coordinator().ForceStop("g1").ok());
  };
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  CHECK(h.StatusOf("g1") == GlobalStatus::kFailed);
}

TEST_CASE("resetNextCronTime retries pending calls now", "[coordinator][operator]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kConfirm, {Unknown(), Unknown(), Unknown()});
  StartTcc(h, "g1", 1);
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  h.Advance(kSecond);
  h.Advance(2 * kSecond);  // now waiting 4 s
  REQUIRE(h.caller().calls().size() == 3);
  REQUIRE(h.coordinator().ResetNextCronTime("g1").ok());
  CHECK(h.caller().calls().size() == 4);
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
}

TEST_CASE("after a restart every unfinished transaction carries on from storage",
          "[coordinator][crash]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kConfirm, {Unknown()});
  h.caller().Script("02", BranchOp::kAction, {Unknown()});
  StartTcc(h, "tcc", 1);
  REQUIRE(h.coordinator().Submit(TccSubmit("tcc")).ok());
  REQUIRE(h.coordinator().Submit(Saga("saga", 2)).ok());
  StartTcc(h, "waiting", 1);
  h.Restart();
  h.Advance(kSecond);
  CHECK(h.StatusOf("tcc") == GlobalStatus::kSucceed);
  CHECK(h.StatusOf("saga") == GlobalStatus::kSucceed);
  CHECK(h.StatusOf("waiting") == GlobalStatus::kPrepared);  // still the client's to submit
  REQUIRE(h.coordinator().Submit(TccSubmit("waiting")).ok());
  CHECK(h.StatusOf("waiting") == GlobalStatus::kSucceed);
}

TEST_CASE("a storage failure is reported as Unavailable and nothing of the request is stored",
          "[coordinator][storage-failure]") {
  CoordinatorHarness h;
  h.faulty_store().FailCommits(true);
  CHECK(h.coordinator().Prepare({"g1", {}}).code() == StatusCode::kUnavailable);
  CHECK(h.coordinator().Submit(Saga("s1", 2)).code() == StatusCode::kUnavailable);
  CHECK_FALSE(h.store().Load("g1")->has_value());
  CHECK_FALSE(h.store().Load("s1")->has_value());
  CHECK(h.caller().calls().empty());
  h.faulty_store().FailCommits(false);
  CHECK(h.coordinator().Submit(Saga("s1", 2)).ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
}

TEST_CASE("a pass whose outcome cannot be stored is retried once storage returns",
          "[coordinator][storage-failure]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 1);
  h.caller().on_call = [&](const engine::BranchCall&) { h.faulty_store().FailCommits(true); };
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  // The confirm succeeded but its outcome was not stored: the transaction is not finished.
  CHECK(h.StatusOf("g1") == GlobalStatus::kSubmitted);
  auto unfinished = h.Load("g1");
  CHECK(testing::RowOf(unfinished, "01", BranchOp::kConfirm).status == BranchStatus::kPrepared);
  h.caller().on_call = nullptr;
  h.faulty_store().FailCommits(false);
  h.Advance(TransactionDriver::kStorageRetryDelay);
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
  // The confirm was sent again: its first outcome was lost, and handlers are idempotent.
  CHECK(h.caller().CallNames() == Names{"01:confirm", "01:confirm"});
}

TEST_CASE("a shutting-down coordinator refuses changes with Unavailable", "[coordinator]") {
  CoordinatorHarness h;
  h.coordinator().BeginShutdown();
  CHECK(h.coordinator().Prepare({"g1", {}}).code() == StatusCode::kUnavailable);
  CHECK(h.coordinator().Submit(Saga("s1", 1)).code() == StatusCode::kUnavailable);
}

TEST_CASE("new gids are unique and valid", "[coordinator]") {
  CoordinatorHarness h;
  std::set<std::string> gids;
  for (int i = 0; i < 10000; ++i) {
    const std::string gid = h.coordinator().NewGid();
    REQUIRE(IsValidGid(gid));
    gids.insert(gid);
  }
  CHECK(gids.size() == 10000);
}

TEST_CASE(
    "a TCC registers at most max_registered_branches branches, a repeated one still counts once",
    "[coordinator][tcc][limits]") {
  CoordinatorSettings settings;
  settings.max_registered_branches = 3;
  CoordinatorHarness h({Duration(60'000), 10}, settings);
  StartTcc(h, "g1", 3);
  REQUIRE(h.coordinator().RegisterBranch(Branch("g1", "02")).ok());  // a retried registration

  const Status refused = h.coordinator().RegisterBranch(Branch("g1", "04"));

  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.message(), Catch::StartsWith("branch_id:") && Catch::Contains("at most 3"));
  CHECK(h.Load("g1").branches.size() == 6);  // nothing of the refused one was stored
  REQUIRE(h.coordinator().Submit(TccSubmit("g1")).ok());
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
}

TEST_CASE(
    "a registration the store refuses for another reason is not answered as too many "
    "branches",
    "[coordinator][tcc][limits]") {
  CoordinatorHarness h;
  StartTcc(h, "g1", 1);
  // What PostgreSQL answers a value it cannot take (a data exception, class 22).
  h.faulty_store().RefuseNextCommit(
      Status::InvalidArgument("postgresql: invalid byte sequence for encoding \"UTF8\""));

  const Status refused = h.coordinator().RegisterBranch(Branch("g1", "02"));

  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.message(), Catch::Contains("invalid byte sequence"));
  CHECK_THAT(refused.message(), !Catch::Contains("branches"));
  CHECK(h.Load("g1").branches.size() == 2);
  REQUIRE(h.coordinator().RegisterBranch(Branch("g1", "02")).ok());  // the retry is stored
}

}  // namespace
}  // namespace settle::drive
