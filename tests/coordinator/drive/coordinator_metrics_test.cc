// What the coordinator counts for /api/metrics, and the stuck alert, as transactions run.
#include "settle/drive/coordinator_metrics.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "coordinator_harness.h"
#include "saga_requests.h"
#include "settle/app/webhook_alerts.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Failure;
using testing::Saga;
using testing::Unknown;

constexpr Duration kSecond{1000};

std::string Render(const CoordinatorMetrics& metrics) {
  metrics::PrometheusText out;
  metrics.WriteTo(out);
  return out.Take();
}

TEST_CASE("a saga that succeeds is counted as started and finished, with each action call",
          "[coordinator][metrics]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("s1", 2)).ok());

  const CoordinatorMetrics& m = h.metrics();
  CHECK(m.Finished(TransType::kSaga, GlobalStatus::kSucceed) == 1);
  CHECK(m.Finished(TransType::kSaga, GlobalStatus::kFailed) == 0);
  CHECK(m.BranchCalls(BranchOp::kAction, BranchResult::kSuccess) == 2);
  const std::string text = Render(m);
  CHECK_THAT(text, Catch::Contains("settle_transactions_started_total{type=\"saga\"} 1\n"));
  CHECK_THAT(text, Catch::Contains(
                       "settle_transactions_finished_total{type=\"saga\",status=\"succeed\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("settle_branch_calls_total{op=\"action\",outcome=\"success\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("settle_branch_call_duration_seconds_count{op=\"action\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("settle_branch_retries_total{op=\"action\"} 0\n"));
}

TEST_CASE("a failed action rolls back: counted as failed, with its compensations",
          "[coordinator][metrics]") {
  CoordinatorHarness h;
  h.caller().Script("02", BranchOp::kAction, {Failure()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 2)).ok());

  REQUIRE(h.StatusOf("s1") == GlobalStatus::kFailed);
  const CoordinatorMetrics& m = h.metrics();
  CHECK(m.Finished(TransType::kSaga, GlobalStatus::kFailed) == 1);
  CHECK(m.BranchCalls(BranchOp::kAction, BranchResult::kFailure) == 1);
  CHECK(m.BranchCalls(BranchOp::kCompensate, BranchResult::kSuccess) >= 1);
}

TEST_CASE("calls after the first of a branch are counted as retries", "[coordinator][metrics]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown(), Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  h.Advance(kSecond);
  h.Advance(2 * kSecond);

  REQUIRE(h.StatusOf("s1") == GlobalStatus::kSucceed);
  const CoordinatorMetrics& m = h.metrics();
  CHECK(m.BranchCalls(BranchOp::kAction, BranchResult::kUnknown) == 2);
  CHECK(m.BranchCalls(BranchOp::kAction, BranchResult::kSuccess) == 1);
  CHECK_THAT(Render(m), Catch::Contains("settle_branch_retries_total{op=\"action\"} 2\n"));
}

TEST_CASE("a force-stopped transaction is counted as failed", "[coordinator][metrics]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());
  REQUIRE(h.coordinator().ForceStop("t1").ok());

  CHECK(h.metrics().Finished(TransType::kTcc, GlobalStatus::kFailed) == 1);
  CHECK_THAT(Render(h.metrics()),
             Catch::Contains("settle_transactions_started_total{type=\"tcc\"} 1\n"));
}

TEST_CASE(
    "a transaction flagged stuck raises one alert naming the failing branch, and is "
    "counted",
    "[coordinator][metrics][alerts]") {
  CoordinatorHarness h({Duration(60'000), 2});
  h.caller().Script("01", BranchOp::kAction, {Unknown(), Unknown(), Unknown(), Unknown()});
  REQUIRE(h.coordinator().Submit(Saga("s1", 1)).ok());
  CHECK(h.alerts().empty());
  h.Advance(kSecond);  // the second failure in a row: stuck
  h.Advance(2 * kSecond);
  h.Advance(4 * kSecond);

  REQUIRE(h.alerts().size() == 1);  // raised when it became stuck, not on every failure
  const storage::Transaction alerted = h.alerts()[0];
  CHECK(alerted.global.gid == "s1");
  CHECK(alerted.global.stuck);
  CHECK(alerted.branches[0].failures == 2);
  CHECK_THAT(Render(h.metrics()),
             Catch::Contains("settle_transactions_stuck_total{type=\"saga\"} 1\n"));

  const std::string body = app::StuckAlertBody(alerted, h.clock().Now());
  const auto json = nlohmann::json::parse(body);
  CHECK(json["event"] == "transaction_stuck");
  CHECK(json["gid"] == "s1");
  CHECK(json["trans_type"] == "saga");
  CHECK(json["branch_id"] == "01");
  CHECK(json["op"] == "action");
  CHECK(json["failures"] == 2);
  CHECK_THAT(json["last_error"].get<std::string>(), Catch::Contains("HTTP 500"));
}

}  // namespace
}  // namespace settle::drive
