// Each transaction type's home checks its typed requests and builds their rows, whatever front
// door they came through (transaction_types.h).
#include "settle/engine/transaction_types.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "settle/engine/msg_engine.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/saga_engine.h"
#include "settle/engine/two_phase_engine.h"
#include "transaction_builder.h"

namespace settle::engine {
namespace {

using testing::kSecond;
using testing::kT0;

// The field a refusal names: the message up to the first ':'.
std::string FieldOf(const Status& s) {
  REQUIRE(s.code() == StatusCode::kInvalidArgument);
  return s.message().substr(0, s.message().find(':'));
}

SubmitRequest Saga(std::size_t steps) {
  SubmitRequest r;
  r.gid = "s1";
  r.trans_type = TransType::kSaga;
  for (std::size_t i = 0; i < steps; ++i) {
    r.steps.push_back({"http://p/action", "http://p/compensate"});
    r.payloads.push_back("{\"step\":" + std::to_string(i) + "}");
  }
  return r;
}

SubmitRequest Message(std::vector<std::string> actions) {
  SubmitRequest r;
  r.gid = "m1";
  r.trans_type = TransType::kMsg;
  for (std::string& action : actions) {
    r.steps.push_back({std::move(action), ""});
    r.payloads.push_back("{}");
  }
  return r;
}

// "01:action:http://p/a" for each row.
std::vector<std::string> Rows(const std::vector<storage::BranchRecord>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    out.push_back(r.branch_id + ":" + std::string(ToString(r.op)) + ":" + r.url);
  }
  return out;
}

TEST_CASE("a saga needs steps, one payload each, and http(s) URLs", "[engine][types]") {
  CHECK(CheckSubmit(Saga(2)).ok());
  CHECK(FieldOf(CheckSubmit(Saga(0))) == "steps");
  CHECK(FieldOf(CheckSubmit(Saga(kMaxSagaSteps + 1))) == "steps");
  SubmitRequest extra_payload = Saga(1);
  extra_payload.payloads.push_back("");
  CHECK(FieldOf(CheckSubmit(extra_payload)) == "payloads");
  SubmitRequest no_action = Saga(2);
  no_action.steps[1].action_url.clear();
  CHECK(FieldOf(CheckSubmit(no_action)) == "steps[1].action");
  SubmitRequest bad_compensate = Saga(1);
  bad_compensate.steps[0].compensate_url = "ftp://p/c";
  CHECK(FieldOf(CheckSubmit(bad_compensate)) == "steps[0].compensate");
  SubmitRequest bad_gid = Saga(1);
  bad_gid.gid = "a/b";
  CHECK(FieldOf(CheckSubmit(bad_gid)) == "gid");
  SubmitRequest bad_header = Saga(1);
  bad_header.options.branch_headers["X"] = "a\r\nEvil: 1";
  CHECK(FieldOf(CheckSubmit(bad_header)) == "branch_headers.X");
}

TEST_CASE("a saga's orders name existing steps and wait for each other in no cycle",
          "[engine][types][saga]") {
  auto with_orders = [](std::map<int, std::vector<int>> orders) {
    SubmitRequest r = Saga(3);
    r.options.concurrent = true;
    r.options.orders = std::move(orders);
    return CheckSubmit(r);
  };
  CHECK(with_orders({{2, {0, 1}}}).ok());
  CHECK(FieldOf(with_orders({{5, {0}}})) == "custom_data.orders.5");
  CHECK(FieldOf(with_orders({{1, {7}}})) == "custom_data.orders.1");
  CHECK(FieldOf(with_orders({{1, {1}}})) == "custom_data.orders.1");
  const Status cycle = with_orders({{0, {2}}, {1, {0}}, {2, {1}}});
  CHECK(FieldOf(cycle) == "custom_data.orders");
  CHECK_THAT(cycle.message(), Catch::Contains("cycle"));
}

TEST_CASE("a saga's submit stores an action and a compensate row per step with its payload",
          "[engine][types][saga]") {
  SubmitRequest r = Saga(2);
  r.steps[1].compensate_url.clear();  // nothing to undo
  auto tx = BuildSubmitted(r, {}, TransactionDefaults{}, kT0, FingerprintOf(r));
  REQUIRE(tx);
  CHECK(tx->global.status == GlobalStatus::kSubmitted);
  CHECK(tx->global.options.timeout_to_fail == Duration(0));  // no default deadline
  CHECK(Rows(tx->branches) ==
        std::vector<std::string>{"01:action:http://p/action", "01:compensate:http://p/compensate",
                                 "02:action:http://p/action", "02:compensate:"});
  CHECK(tx->branches[2].data == "{\"step\":1}");
  CHECK(tx->branches[2].seq == 1);
  CHECK(tx->branches[3].status == BranchStatus::kSucceed);
  CHECK(tx->branches[1].status == BranchStatus::kPrepared);
}

TEST_CASE(
    "a message's steps are URLs or topics, without compensation, with query_prepared to prepare",
    "[engine][types][msg]") {
  CHECK(CheckSubmit(Message({"http://p/a", "topic://orders"})).ok());
  CHECK(FieldOf(CheckSubmit(Message({"topic://a b"}))) == "steps[0].action");
  CHECK(FieldOf(CheckSubmit(Message({"http://p/a", "p/a"}))) == "steps[1].action");
  SubmitRequest compensating = Message({"http://p/a"});
  compensating.steps[0].compensate_url = "http://p/c";
  CHECK(FieldOf(CheckSubmit(compensating)) == "steps[0].compensate");

  PrepareRequest prepare;
  prepare.gid = "m1";
  prepare.trans_type = TransType::kMsg;
  prepare.steps = {{"http://p/a", ""}};
  prepare.payloads = {"{}"};
  CHECK(FieldOf(CheckPrepare(prepare)) == "query_prepared");
  prepare.query_prepared = "http://shop/qp";
  CHECK(CheckPrepare(prepare).ok());
  prepare.trans_type = TransType::kSaga;
  CHECK(FieldOf(CheckPrepare(prepare)) == "trans_type");
}

TEST_CASE("a topic step makes a delivery per subscriber, numbered as DTM does",
          "[engine][types][msg]") {
  const SubmitRequest r = Message({"http://p/a", "topic://orders", "topic://audit"});
  CHECK(TopicsOf(r.steps) == std::vector<std::string>{"orders", "audit"});
  const TopicSubscribers subscribers = {{"orders", {"http://o/1", "http://o/2"}},
                                        {"audit", {"http://a/1"}}};
  auto tx = BuildSubmitted(r, subscribers, TransactionDefaults{}, kT0, FingerprintOf(r));
  REQUIRE(tx);
  CHECK(Rows(tx->branches) ==
        std::vector<std::string>{"01:action:http://p/a", "02-01:action:http://o/1",
                                 "02-02:action:http://o/2", "03:action:http://a/1"});
  CHECK(tx->branches[2].seq == 1);

  const auto nobody =
      BuildSubmitted(r, {{"orders", {"http://o/1"}}}, TransactionDefaults{}, kT0, FingerprintOf(r));
  REQUIRE_FALSE(nobody);
  CHECK_THAT(nobody.status().message(), Catch::StartsWith("steps[2].action: topic audit"));

  const TopicSubscribers crowd = {
      {"orders", std::vector<std::string>(kMaxMsgDeliveries, "http://o/1")},
      {"audit", {"http://a/1"}}};
  const auto too_many = BuildSubmitted(r, crowd, TransactionDefaults{}, kT0, FingerprintOf(r));
  REQUIRE_FALSE(too_many);
  CHECK(FieldOf(too_many.status()) == "steps");
}

TEST_CASE("rows made from one payload share its bytes, which the store then keeps once",
          "[engine][types][shared-body]") {
  SubmitRequest message = Message({"topic://orders", "http://p/a"});
  message.payloads = {std::string(5000, 'o'), std::string(5000, 'o')};
  const TopicSubscribers subscribers = {{"orders", {"http://o/1", "http://o/2", "http://o/3"}}};
  auto deliveries =
      BuildSubmitted(message, subscribers, TransactionDefaults{}, kT0, FingerprintOf(message));
  REQUIRE(deliveries);
  const std::vector<storage::BranchRecord>& rows = deliveries->branches;
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].data == message.payloads[0]);
  CHECK(rows[1].data.SharesWith(rows[0].data));
  CHECK(rows[2].data.SharesWith(rows[0].data));
  // Another step's payload is its own, equal or not.
  CHECK(rows[3].data == rows[0].data);
  CHECK_FALSE(rows[3].data.SharesWith(rows[0].data));

  SubmitRequest saga = Message({"http://p/a", "http://p/b"});
  saga.trans_type = TransType::kSaga;
  saga.steps[0].compensate_url = "http://p/undo-a";
  saga.steps[1].compensate_url = "http://p/undo-b";
  saga.payloads = {"{\"step\":1}", "{\"step\":2}"};
  const std::vector<storage::BranchRecord> saga_rows = SagaRows(saga, kT0);
  REQUIRE(saga_rows.size() == 4);
  CHECK(saga_rows[1].data.SharesWith(saga_rows[0].data));  // step 1's action and compensate
  CHECK(saga_rows[3].data.SharesWith(saga_rows[2].data));
  CHECK_FALSE(saga_rows[2].data.SharesWith(saga_rows[0].data));

  RegisterBranchRequest tcc;
  tcc.gid = "t1";
  tcc.branch_id = "01";
  tcc.confirm_url = "http://p/confirm";
  tcc.cancel_url = "http://p/cancel";
  tcc.data = "{\"amount\":30}";
  const std::vector<storage::BranchRecord> registered = RegisteredRows(tcc, kT0);
  REQUIRE(registered.size() == 2);
  CHECK(registered[0].data == tcc.data);
  CHECK(registered[1].data.SharesWith(registered[0].data));
}

TEST_CASE("a prepared message stores its back-check row first and is due at timeout_to_fail",
          "[engine][types][msg]") {
  PrepareRequest r;
  r.gid = "m1";
  r.trans_type = TransType::kMsg;
  r.steps = {{"http://p/a", ""}};
  r.payloads = {"{}"};
  r.query_prepared = "http://shop/qp";
  TransactionDefaults defaults;
  defaults.prepared_timeout_to_fail = 10 * kSecond;
  auto tx = BuildPrepared(r, {}, defaults, kT0);
  REQUIRE(tx);
  CHECK(tx->global.status == GlobalStatus::kPrepared);
  CHECK(tx->global.next_cron_time == kT0 + 10 * kSecond);
  CHECK(Rows(tx->branches) ==
        std::vector<std::string>{"00:msg:http://shop/qp", "01:action:http://p/a"});
  CHECK(tx->branches[0].seq == -1);
}

TEST_CASE("a registration stores the rollback op's row and the commit op's", "[engine][types]") {
  RegisterBranchRequest tcc;
  tcc.gid = "t1";
  tcc.branch_id = "01";
  tcc.confirm_url = "http://p/confirm";
  tcc.cancel_url = "http://p/cancel";
  tcc.data = "{\"amount\":30}";
  REQUIRE(CheckRegisterBranch(tcc).ok());
  CHECK(Rows(RegisteredRows(tcc, kT0)) ==
        std::vector<std::string>{"01:cancel:http://p/cancel", "01:confirm:http://p/confirm"});

  RegisterBranchRequest xa = tcc;
  xa.trans_type = TransType::kXa;
  CHECK(FieldOf(CheckRegisterBranch(xa)) == "url");
  xa.url = "http://db/xa";
  REQUIRE(CheckRegisterBranch(xa).ok());
  CHECK(Rows(RegisteredRows(xa, kT0)) ==
        std::vector<std::string>{"01:rollback:http://db/xa", "01:commit:http://db/xa"});

  tcc.branch_id = "0 1";
  CHECK(FieldOf(CheckRegisterBranch(tcc)) == "branch_id");
  tcc.branch_id = "01";
  tcc.trans_type = TransType::kSaga;
  CHECK(FieldOf(CheckRegisterBranch(tcc)) == "trans_type");
  CHECK(FieldOf(TooManyBranches(xa, 1000)) == "branch_id");
}

TEST_CASE("a Try settled countersigns is on the participant of its confirm and cancel",
          "[engine][types]") {
  RegisterBranchRequest tcc;
  tcc.gid = "t1";
  tcc.branch_id = "01";
  tcc.confirm_url = "http://Bank:8081/api/TransInConfirm";
  tcc.cancel_url = "http://bank:8081/api/TransInCancel";
  CHECK(CheckSameParticipant(tcc).ok());  // no Try named
  tcc.try_url = "http://bank:8081/api/TransInTry?tenant=a";
  REQUIRE(CheckRegisterBranch(tcc).ok());
  CHECK(CheckSameParticipant(tcc).ok());
  for (const char* elsewhere :
       {"http://bank-c:8081/api/TransInTry", "http://bank:8082/api/TransInTry",
        "https://bank:8081/api/TransInTry", "grpc://bank:8081/bank.Bank/TransInTry"}) {
    INFO(elsewhere);
    tcc.try_url = elsewhere;
    CHECK(FieldOf(CheckSameParticipant(tcc)) == "try");
  }
  // gRPC methods: the same origin.
  tcc.confirm_url = "grpc://bank:9000/bank.Bank/TransInConfirm";
  tcc.cancel_url = "bank:9000/bank.Bank/TransInCancel";
  tcc.try_url = "bank:9000/bank.Bank/TransInTry";
  CHECK(CheckSameParticipant(tcc).ok());
  tcc.try_url = "grpcs://bank:9000/bank.Bank/TransInTry";
  CHECK(FieldOf(CheckSameParticipant(tcc)) == "try");
}

TEST_CASE("a submit creates sagas and unprepared messages, and moves prepared ones",
          "[engine][types]") {
  CHECK(RulesOf(TransType::kSaga).submit.creates);
  CHECK_FALSE(RulesOf(TransType::kSaga).submit.moves_prepared);
  CHECK(RulesOf(TransType::kMsg).submit.creates);
  CHECK(RulesOf(TransType::kMsg).submit.moves_prepared);
  CHECK_FALSE(RulesOf(TransType::kTcc).submit.creates);
  CHECK(RulesOf(TransType::kXa).submit.moves_prepared);
  // A TCC is created by its prepare: a submit never builds one.
  SubmitRequest tcc;
  tcc.gid = "t1";
  CHECK(BuildSubmitted(tcc, {}, TransactionDefaults{}, kT0, FingerprintOf(tcc)).status().code() ==
        StatusCode::kConflict);
}

TEST_CASE("an abort fails a prepared message at once and drives a TCC's or XA's cancels",
          "[engine][types]") {
  CHECK(RulesOf(TransType::kMsg).abort.to == GlobalStatus::kFailed);
  CHECK_FALSE(RulesOf(TransType::kMsg).abort.drives);
  CHECK(RulesOf(TransType::kTcc).abort.to == GlobalStatus::kAborting);
  CHECK(RulesOf(TransType::kXa).abort.drives);
  AbortRequest abort{"t1", std::string(kMaxReasonLength + 1, 'r'), false, TransType::kTcc};
  CHECK(FieldOf(CheckAbort(abort)) == "rollback_reason");
  ForceStopRequest stop{"t1", std::string(kMaxReasonLength + 1, 'r'), "ops"};
  CHECK(FieldOf(CheckForceStop(stop)) == "reason");
}

TEST_CASE("a subscription names a topic, an http(s) url and a short remark", "[engine][types]") {
  CHECK(CheckSubscription({"orders", "http://loyalty/points", "x"}).ok());
  CHECK(FieldOf(CheckSubscription({"", "http://a/b", ""})) == "topic");
  CHECK(FieldOf(CheckSubscription({"a/b", "http://a/b", ""})) == "topic");
  CHECK(FieldOf(CheckSubscription({"t", "mailto:x", ""})) == "url");
  CHECK(FieldOf(CheckSubscription({"t", "http://a/b", std::string(2000, 'r')})) == "remark");
}

TEST_CASE("timeout_to_fail and a message's delay beyond the server's ceiling are refused",
          "[types][bounds]") {
  const Duration ceiling = std::chrono::hours(24 * 7);
  RequestOptions options;
  CHECK(CheckWaitCeiling(options, ceiling).ok());
  options.timeout_to_fail = ceiling;
  CHECK(CheckWaitCeiling(options, ceiling).ok());
  options.timeout_to_fail = ceiling + std::chrono::seconds(1);
  const Status too_long = CheckWaitCeiling(options, ceiling);
  CHECK(FieldOf(too_long) == "timeout_to_fail");
  CHECK(too_long.message() ==
        "timeout_to_fail: at most 604800 seconds on this server (--max-timeout-to-fail)");
  // No ceiling but the protocol's own.
  CHECK(CheckWaitCeiling(options, Duration(0)).ok());
  options.timeout_to_fail.reset();
  options.delay = std::chrono::hours(24 * 365);
  CHECK(FieldOf(CheckWaitCeiling(options, ceiling)) == "custom_data.delay");
}

TEST_CASE("a request_timeout beyond the server's ceiling of one branch call is refused",
          "[types][bounds]") {
  const Duration ceiling = std::chrono::minutes(5);
  RequestOptions options;
  CHECK(CheckCallCeiling(options, ceiling).ok());
  options.request_timeout = ceiling;
  CHECK(CheckCallCeiling(options, ceiling).ok());
  options.request_timeout = ceiling + std::chrono::seconds(1);
  const Status too_long = CheckCallCeiling(options, ceiling);
  CHECK(too_long.code() == StatusCode::kInvalidArgument);
  CHECK(FieldOf(too_long) == "request_timeout");
  CHECK(too_long.message() ==
        "request_timeout: at most 300 seconds on this server (--max-branch-timeout)");
  // Years, as a client may ask.
  options.request_timeout = std::chrono::hours(24 * 365 * 10);
  CHECK(FieldOf(CheckCallCeiling(options, ceiling)) == "request_timeout");
  // No ceiling.
  CHECK(CheckCallCeiling(options, Duration(0)).ok());
  // The wait's ceiling does not judge it, nor this one the wait.
  CHECK(CheckWaitCeiling(options, ceiling).ok());
  options.request_timeout.reset();
  options.timeout_to_fail = std::chrono::hours(24 * 365);
  CHECK(CheckCallCeiling(options, ceiling).ok());
}

}  // namespace
}  // namespace settle::engine
