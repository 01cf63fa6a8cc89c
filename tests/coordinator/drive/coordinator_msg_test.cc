// Transactional messages through the coordinator, as settled assembles it (real SQLite store,
// driver, scheduler), with a fake clock and scripted receivers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "message_requests.h"
#include "settle/drive/coordinator.h"
#include "transaction_builder.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Failure;
using testing::Ongoing;
using testing::RowOf;
using testing::SubmitOfPrepared;
using testing::Unknown;
using Names = std::vector<std::string>;

constexpr Duration kSecond{1000};
const std::string kQueryPrepared = "http://shop/query_prepared";

std::vector<engine::RequestStep> Steps(const std::vector<std::string>& actions) {
  std::vector<engine::RequestStep> steps;
  for (const std::string& action : actions) steps.push_back({action, ""});
  return steps;
}

// The payload of step i: {"points": i+1}.
std::vector<std::string> Payloads(std::size_t steps) {
  std::vector<std::string> payloads;
  for (std::size_t i = 0; i < steps; ++i) {
    payloads.push_back(R"({"points":)" + std::to_string(i + 1) + "}");
  }
  return payloads;
}

engine::PrepareRequest PrepareMsg(const std::string& gid, std::vector<std::string> actions,
                                  engine::RequestOptions options = {}) {
  engine::PrepareRequest r;
  r.gid = gid;
  r.trans_type = TransType::kMsg;
  r.options = options;
  r.payloads = Payloads(actions.size());
  r.steps = Steps(actions);
  r.query_prepared = kQueryPrepared;
  return r;
}

engine::SubmitRequest SubmitMsg(const std::string& gid,
                                std::vector<std::string> actions = {"http://p/a"},
                                engine::RequestOptions options = {}) {
  engine::SubmitRequest r{gid, TransType::kMsg, options, Steps(actions), Payloads(actions.size())};
  return r;
}

engine::AbortRequest AbortMsg(const std::string& gid) {
  engine::AbortRequest r;
  r.gid = gid;
  r.trans_type = TransType::kMsg;
  return r;
}

TEST_CASE("a prepared message delivers nothing until submitted, then every step in order",
          "[coordinator][msg]") {
  CoordinatorHarness h;
  const engine::PrepareRequest prepare = PrepareMsg("m1", {"http://p/points", "http://p/ship"});
  REQUIRE(h.coordinator().Prepare(prepare).ok());
  h.Advance(10 * kSecond);
  CHECK(h.caller().calls().empty());
  CHECK(h.StatusOf("m1") == GlobalStatus::kPrepared);

  REQUIRE(h.coordinator().Submit(SubmitOfPrepared(prepare)).ok());
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action"});
  const auto call = h.caller().calls()[0];
  CHECK(call.url == "http://p/points");
  CHECK(call.data == R"({"points":1})");
  CHECK(call.trans_type == TransType::kMsg);
}

TEST_CASE("a message submitted without a prepare is delivered", "[coordinator][msg]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1", {"http://p/a", "http://p/b"})).ok());
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action"});
}

TEST_CASE("a concurrent message delivers every step at once", "[coordinator][msg]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.concurrent = true;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1", {"http://p/a", "http://p/b"}, options)).ok());
  // Step 2 does not wait for step 1, which failed once.
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action"});
  h.Advance(kSecond);
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
}

TEST_CASE("a prepared message nobody submits is checked back at timeout_to_fail",
          "[coordinator][msg]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.timeout_to_fail = 10 * kSecond;

  SECTION("SUCCESS: the local transaction committed, the message is delivered") {
    REQUIRE(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"}, options)).ok());
    h.Advance(9 * kSecond);
    CHECK(h.caller().calls().empty());
    h.Advance(kSecond);
    CHECK(h.caller().CallNames() == Names{"00:msg", "01:action"});
    const auto check = h.caller().calls()[0];
    CHECK(check.url == kQueryPrepared);
    CHECK(check.data.empty());  // a GET with gid, trans_type, branch_id 00 and op msg
    CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  }
  SECTION("FAILURE: it never committed, the message fails and nothing is delivered") {
    h.caller().Script("00", BranchOp::kMsg, {Failure()});
    REQUIRE(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"}, options)).ok());
    h.Advance(10 * kSecond);
    CHECK(h.caller().CallNames() == Names{"00:msg"});
    const auto tx = h.Load("m1");
    CHECK(tx.global.status == GlobalStatus::kFailed);
    CHECK_THAT(tx.global.rollback_reason, Catch::Contains("query_prepared"));
    h.Advance(100 * kSecond);
    CHECK(h.caller().CallNames() == Names{"00:msg"});
  }
  SECTION("ONGOING or an error: asked again later, until it knows") {
    h.caller().Script("00", BranchOp::kMsg, {Ongoing(), Unknown(), Unknown()});
    REQUIRE(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"}, options)).ok());
    h.Advance(10 * kSecond);  // ONGOING: again after the interval
    CHECK(h.caller().CallNames() == Names{"00:msg"});
    h.Advance(kSecond);  // an error: again after the interval
    CHECK(h.caller().CallNames() == Names{"00:msg", "00:msg"});
    h.Advance(kSecond);  // an error again: the backoff doubles
    CHECK(h.caller().CallNames() == Names{"00:msg", "00:msg", "00:msg"});
    h.Advance(kSecond);
    CHECK(h.caller().calls().size() == 3);
    CHECK(h.StatusOf("m1") == GlobalStatus::kPrepared);
    h.Advance(kSecond);
    CHECK(h.caller().CallNames() == Names{"00:msg", "00:msg", "00:msg", "00:msg", "01:action"});
    CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  }
}

TEST_CASE(
    "an aborted prepared message fails and delivers nothing, a submitted one cannot be "
    "aborted",
    "[coordinator][msg]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"})).ok());
  REQUIRE(h.coordinator().Abort(AbortMsg("m1")).ok());
  CHECK(h.StatusOf("m1") == GlobalStatus::kFailed);
  // Only a prepared message can be aborted, as in DTM.
  CHECK(h.coordinator().Abort(AbortMsg("m1")).code() == StatusCode::kConflict);
  CHECK(h.coordinator().Submit(SubmitMsg("m1")).code() == StatusCode::kConflict);
  h.Advance(100 * kSecond);
  CHECK(h.caller().calls().empty());

  REQUIRE(h.coordinator().Submit(SubmitMsg("m2")).ok());
  CHECK(h.coordinator().Abort(AbortMsg("m2")).code() == StatusCode::kConflict);
}

TEST_CASE("a receiver that answers FAILURE is asked again: the message is stuck, never dropped",
          "[coordinator][msg]") {
  CoordinatorHarness h({Duration(60'000), 3});
  h.caller().Script("01", BranchOp::kAction, {Failure(), Failure(), Failure()});
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1")).ok());
  h.Advance(kSecond);
  h.Advance(2 * kSecond);
  const auto stuck = h.Load("m1");
  CHECK(stuck.global.status == GlobalStatus::kSubmitted);
  CHECK(stuck.global.stuck);
  CHECK(h.alerts().size() == 1);
  h.Advance(4 * kSecond);
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "01:action", "01:action", "01:action"});
}

TEST_CASE("best-effort notification: with retry_limit the message gives up, failed, with an alert",
          "[coordinator][msg]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.retry_limit = 3;
  h.caller().Script("02", BranchOp::kAction,
                    {Unknown("connection refused"), Unknown("connection refused"),
                     Unknown("connection refused")});
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1", {"http://p/a", "http://p/b"}, options)).ok());
  h.Advance(kSecond);
  h.Advance(2 * kSecond);
  auto tx = h.Load("m1");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK_THAT(tx.global.rollback_reason, Catch::Contains("branch 02") &&
                                            Catch::Contains("retry_limit 3") &&
                                            Catch::Contains("connection refused"));
  CHECK(RowOf(tx, "01", BranchOp::kAction).status == BranchStatus::kSucceed);
  REQUIRE(h.alerts().size() == 1);
  CHECK(h.alerts()[0].global.status == GlobalStatus::kFailed);
  h.Advance(100 * kSecond);
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action", "02:action", "02:action"});
}

TEST_CASE("a message that gave up is sent again by an operator and delivered",
          "[coordinator][msg][resend]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.retry_limit = 2;
  h.caller().Script("02", BranchOp::kAction,
                    {Unknown("connection refused"), Unknown("connection refused")});
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1", {"http://p/a", "http://p/b"}, options)).ok());
  h.Advance(kSecond);
  REQUIRE(h.StatusOf("m1") == GlobalStatus::kFailed);
  const engine::PauseRequest again{"m1", "receiver fixed, OPS-21", "on-call", {}};
  REQUIRE(h.coordinator().Resend(again).ok());
  // The undelivered step is called at once; the delivered one is not called again.
  CHECK(h.caller().CallNames() == Names{"01:action", "02:action", "02:action", "02:action"});
  auto tx = h.Load("m1");
  CHECK(tx.global.status == GlobalStatus::kSucceed);
  CHECK(tx.global.rollback_reason.empty());
  CHECK(RowOf(tx, "02", BranchOp::kAction).failed_attempts.size() == 2);  // history kept
  auto page = h.store().ListAudit(storage::AuditQuery{});
  REQUIRE(page);
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].action == "resend");
  // Delivered: there is nothing to send again.
  CHECK(h.coordinator().Resend(again).code() == StatusCode::kConflict);
}

TEST_CASE("only a message that gave up is sent again", "[coordinator][msg][resend]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Submit(SubmitMsg("pending", {"http://p/a"})).ok());
  const auto resend = [&h](const std::string& gid, const std::string& reason = "why") {
    return h.coordinator().Resend(engine::PauseRequest{gid, reason, "on-call", {}});
  };
  CHECK(resend("nobody").code() == StatusCode::kNotFound);
  CHECK_THAT(resend("pending").message(), Catch::Contains("is submitted"));
  CHECK_THAT(resend("pending", "").message(), Catch::StartsWith("reason: required"));
  REQUIRE(h.coordinator().ForceStop("pending", "not needed").ok());
  CHECK_THAT(resend("pending").message(), Catch::Contains("an operator stopped it"));
  engine::SubmitRequest saga{"saga", TransType::kSaga, {}, {}};
  saga.steps.push_back({"http://p/action", "http://p/compensate"});
  saga.payloads.push_back("{}");
  h.caller().Script("01", BranchOp::kAction, {testing::Failure()});
  REQUIRE(h.coordinator().Submit(saga).ok());
  REQUIRE(h.StatusOf("saga") == GlobalStatus::kFailed);
  CHECK_THAT(resend("saga").message(), Catch::Contains("is a saga transaction"));
}

TEST_CASE("custom_data's delay holds the first delivery back", "[coordinator][msg]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.delay = 30 * kSecond;
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1", {"http://p/a"}, options)).ok());
  h.Advance(29 * kSecond);
  CHECK(h.caller().calls().empty());
  h.Advance(kSecond);
  CHECK(h.caller().CallNames() == Names{"01:action"});
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
}

TEST_CASE("a topic step goes to every subscriber the topic has when the message is created",
          "[coordinator][msg][topics]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Subscribe({"orders", "http://loyalty/points", "loyalty"}).ok());
  REQUIRE(h.coordinator().Subscribe({"orders", "http://mail/confirm", ""}).ok());
  CHECK(h.coordinator().Subscribe({"orders", "http://mail/confirm", ""}).code() ==
        StatusCode::kAlreadyExists);
  REQUIRE(h.coordinator().Subscribe({"audit", "http://audit/log", ""}).ok());

  const engine::PrepareRequest prepare = PrepareMsg("m1", {"topic://orders", "topic://audit"});
  REQUIRE(h.coordinator().Prepare(prepare).ok());
  // Later subscriptions do not change a message already created.
  REQUIRE(h.coordinator().Unsubscribe({"orders", "http://mail/confirm", ""}).ok());
  REQUIRE(h.coordinator().Submit(SubmitOfPrepared(prepare)).ok());
  // One after another, in subscription order, as DTM delivers a topic.
  CHECK(h.caller().CallNames() == Names{"01-01:action", "01-02:action", "02:action"});
  CHECK(h.caller().calls()[1].url == "http://mail/confirm");
  CHECK(h.caller().calls()[2].url == "http://audit/log");

  const auto topics = h.coordinator().Topics();
  REQUIRE(topics);
  REQUIRE(topics->size() == 2);
  CHECK((*topics)[0].name == "audit");
  CHECK((*topics)[1].subscribers.size() == 1);

  const Status unknown = h.coordinator().Submit(SubmitMsg("m2", {"http://p/a", "topic://nobody"}));
  CHECK(unknown.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(unknown.message(), Catch::StartsWith("steps[1].action: topic nobody"));
  CHECK(h.coordinator().Query("m2")->has_value() == false);  // nothing stored
  CHECK(h.coordinator().Unsubscribe({"orders", "http://mail/confirm", ""}).code() ==
        StatusCode::kNotFound);
}

TEST_CASE("a message carries on after a crash: prepared, submitted, half delivered",
          "[coordinator][msg][crash]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.timeout_to_fail = 10 * kSecond;
  h.caller().Script("02", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Prepare(PrepareMsg("prepared", {"http://p/a"}, options)).ok());
  const engine::PrepareRequest submitted = PrepareMsg("submitted", {"http://p/a"}, options);
  REQUIRE(h.coordinator().Prepare(submitted).ok());
  REQUIRE(h.coordinator().Submit(SubmitMsg("half", {"http://p/a", "http://p/b"})).ok());
  REQUIRE(h.StatusOf("half") == GlobalStatus::kSubmitted);  // step 2 failed once
  h.Restart();
  REQUIRE(h.coordinator().Submit(SubmitOfPrepared(submitted)).ok());
  h.Advance(10 * kSecond);  // the prepared one is checked back; the half one retried
  CHECK(h.StatusOf("prepared") == GlobalStatus::kSucceed);
  CHECK(h.StatusOf("submitted") == GlobalStatus::kSucceed);
  CHECK(h.StatusOf("half") == GlobalStatus::kSucceed);
}

TEST_CASE("repeated prepares and submits of a message are harmless, other types are refused",
          "[coordinator][msg]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  REQUIRE(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"})).ok());
  CHECK(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"})).ok());
  REQUIRE(h.coordinator().Submit(SubmitMsg("m1")).ok());
  REQUIRE(h.StatusOf("m1") == GlobalStatus::kSubmitted);  // its delivery failed once
  CHECK(h.coordinator().Submit(SubmitMsg("m1")).ok());    // a duplicate is accepted
  h.Advance(kSecond);                                     // the retry, when it is due
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:action", "01:action"});
  // Once finished, as for TCC and in DTM: refused.
  CHECK(h.coordinator().Submit(SubmitMsg("m1")).code() == StatusCode::kConflict);
  CHECK(h.coordinator().Prepare(PrepareMsg("m1", {"http://p/a"})).code() == StatusCode::kConflict);

  // A TCC's branch cannot join a message, nor a message's submit a saga.
  engine::RegisterBranchRequest branch{"m1", "01", "", "http://p/c", "http://p/x"};
  CHECK(h.coordinator().RegisterBranch(branch).code() == StatusCode::kConflict);
  REQUIRE(h.coordinator()
              .Submit(engine::SubmitRequest{
                  "s1", TransType::kSaga, {}, Steps({"http://p/a"}), Payloads(1)})
              .ok());
  CHECK(h.coordinator().Submit(SubmitMsg("s1")).code() == StatusCode::kConflict);
}

}  // namespace
}  // namespace settle::drive
