// The OpenTelemetry spans of a transaction (drive/transaction_spans.h): one per branch call
// made, a child of the transaction's span, and the transaction's own once it is final, a child
// of its caller's; none for a trace its caller did not sample.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "coordinator_harness.h"
#include "saga_requests.h"
#include "settle/drive/transaction_spans.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Failure;
using testing::Saga;
using testing::Unknown;

constexpr Duration kSecond{1000};
constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kCallerSpan = "00f067aa0ba902b7";

std::optional<TraceContext> Caller(const char* flags = "01") {
  return ParseTraceparent(std::string("00-") + kTrace + "-" + kCallerSpan + "-" + flags);
}

// The value of the attribute `key` of `span`; a default-constructed SpanValue (an empty string)
// when it has none.
SpanValue Attribute(const Span& span, const std::string& key) {
  for (const auto& [name, value] : span.attributes) {
    if (name == key) return value;
  }
  return {};
}
bool HasAttribute(const Span& span, const std::string& key) {
  return std::any_of(span.attributes.begin(), span.attributes.end(),
                     [&](const auto& a) { return a.first == key; });
}

std::vector<Span> Named(const std::vector<Span>& spans, const std::string& name) {
  std::vector<Span> out;
  std::copy_if(spans.begin(), spans.end(), std::back_inserter(out),
               [&](const Span& s) { return s.name == name; });
  return out;
}

TEST_CASE(
    "a saga reports a span per call, children of its own span, and its own span, a child of its "
    "caller's, once it succeeds",
    "[coordinator][trace][otlp]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  engine::SubmitRequest saga = Saga("g1", 2);
  saga.trace = Caller();
  REQUIRE(h.coordinator().Submit(std::move(saga)).ok());
  CHECK(h.spans().size() == 1);  // 01 failed; 02 waits for it; nothing final yet
  h.Advance(kSecond);            // 01 is retried, then 02 called
  const storage::Transaction tx = h.Load("g1");
  REQUIRE(tx.global.status == GlobalStatus::kSucceed);

  const std::vector<Span> spans = h.spans();
  REQUIRE(spans.size() == 4);
  const std::vector<Span> actions = Named(spans, "action");
  REQUIRE(actions.size() == 3);
  for (const Span& call : actions) {
    CHECK(call.context.trace_id == kTrace);
    CHECK(call.context.parent_id == tx.global.trace.span_id);
    CHECK(call.kind == SpanKind::kClient);
    CHECK(std::get<std::string>(Attribute(call, "settle.gid")) == "g1");
    CHECK(std::get<std::string>(Attribute(call, "url.full")) == "http://p/action");
    CHECK(call.end_unix_nano >= call.start_unix_nano);
  }
  // 01's first attempt failed; its second, then 02's first, did not.
  const Span& failed = actions[0];
  CHECK(std::get<std::string>(Attribute(failed, "settle.branch_id")) == "01");
  CHECK(std::get<std::int64_t>(Attribute(failed, "settle.attempt")) == 1);
  CHECK(std::get<std::string>(Attribute(failed, "settle.outcome")) == "UNKNOWN");
  CHECK(std::get<std::int64_t>(Attribute(failed, "http.response.status_code")) == 500);
  CHECK(failed.status == SpanStatus::kError);
  CHECK(failed.status_message == "HTTP 500: boom");
  const Span& retried = actions[1];
  CHECK(std::get<std::string>(Attribute(retried, "settle.branch_id")) == "01");
  CHECK(std::get<std::int64_t>(Attribute(retried, "settle.attempt")) == 2);
  CHECK(retried.status == SpanStatus::kUnset);
  CHECK(retried.context.span_id != failed.context.span_id);
  CHECK(std::get<std::string>(Attribute(actions[2], "settle.branch_id")) == "02");

  const Span& own = spans.back();
  CHECK(own.name == "saga");
  CHECK(own.context.trace_id == kTrace);
  CHECK(own.context.span_id == tx.global.trace.span_id);
  CHECK(own.context.parent_id == kCallerSpan);
  CHECK(own.start_unix_nano == UnixNanos(tx.global.create_time));
  CHECK(own.end_unix_nano == UnixNanos(*tx.global.finish_time));
  CHECK(std::get<std::string>(Attribute(own, "settle.status")) == "succeed");
  CHECK(std::get<std::int64_t>(Attribute(own, "settle.branches")) == 4);
  CHECK(own.status == SpanStatus::kUnset);
  REQUIRE(own.events.size() == 2);
  CHECK(own.events[0].name == "created");
  CHECK(own.events[1].name == "succeed");
}

TEST_CASE(
    "a transaction finished after a restart is reported with the span id and start stored when "
    "it began",
    "[coordinator][trace][otlp]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  engine::SubmitRequest saga = Saga("g6", 1);
  saga.trace = Caller();
  REQUIRE(h.coordinator().Submit(std::move(saga)).ok());
  const storage::Transaction begun = h.Load("g6");
  REQUIRE(begun.global.status == GlobalStatus::kSubmitted);
  h.Restart();  // as after kill -9: nothing of the first run is in memory
  h.Advance(kSecond);
  REQUIRE(h.StatusOf("g6") == GlobalStatus::kSucceed);
  const std::vector<Span> own = Named(h.spans(), "saga");
  REQUIRE(own.size() == 1);
  CHECK(own[0].context.span_id == begun.global.trace.span_id);
  CHECK(own[0].context.parent_id == kCallerSpan);
  CHECK(own[0].start_unix_nano == UnixNanos(begun.global.create_time));
  for (const Span& call : Named(h.spans(), "action")) {
    CHECK(call.context.parent_id == begun.global.trace.span_id);
  }
}

TEST_CASE("a saga that fails reports its compensations and an error span with the reason",
          "[coordinator][trace][otlp]") {
  CoordinatorHarness h;
  h.caller().Script("02", BranchOp::kAction, {Failure()});
  engine::SubmitRequest saga = Saga("g2", 2);
  saga.trace = Caller();
  REQUIRE(h.coordinator().Submit(std::move(saga)).ok());
  h.Advance(kSecond);
  const storage::Transaction tx = h.Load("g2");
  REQUIRE(tx.global.status == GlobalStatus::kFailed);
  const std::vector<Span> spans = h.spans();
  CHECK_FALSE(Named(spans, "compensate").empty());
  const std::vector<Span> own = Named(spans, "saga");
  REQUIRE(own.size() == 1);
  CHECK(own[0].status == SpanStatus::kError);
  CHECK(own[0].status_message == tx.global.rollback_reason);
  std::vector<std::string> events;
  for (const SpanEvent& e : own[0].events) events.push_back(e.name);
  CHECK(events == std::vector<std::string>{"created", "aborting", "failed"});
  CHECK(std::get<std::string>(own[0].events[1].attributes.at(0).second) ==
        tx.global.rollback_reason);
}

TEST_CASE("a trace its caller did not sample reports no span, and its calls still carry it",
          "[coordinator][trace][otlp]") {
  CoordinatorHarness h;
  engine::SubmitRequest saga = Saga("g3", 2);
  saga.trace = Caller("00");
  REQUIRE(h.coordinator().Submit(std::move(saga)).ok());
  REQUIRE(h.StatusOf("g3") == GlobalStatus::kSucceed);
  CHECK(h.spans().empty());
  for (const engine::BranchCall& call : h.caller().calls()) {
    CHECK(call.trace.trace_id == kTrace);
    CHECK(call.trace.flags == 0);
  }
}

TEST_CASE("a transaction without a caller's span is the root of a trace of its own",
          "[coordinator][trace][otlp]") {
  CoordinatorHarness h;
  REQUIRE(h.coordinator().Submit(Saga("g4", 1)).ok());
  const storage::Transaction tx = h.Load("g4");
  const std::vector<Span> own = Named(h.spans(), "saga");
  REQUIRE(own.size() == 1);
  CHECK(own[0].context.trace_id == tx.global.trace.trace_id);
  CHECK(own[0].context.parent_id.empty());
}

TEST_CASE("a transaction an operator stops is reported by the coordinator, as stopped",
          "[coordinator][trace][otlp]") {
  CoordinatorHarness h;
  engine::PrepareRequest prepare{"t1", {}};
  prepare.trace = Caller();
  REQUIRE(h.coordinator().Prepare(std::move(prepare)).ok());
  REQUIRE(h.coordinator().ForceStop("t1", "stock never arrives", "ops").ok());
  const std::vector<Span> spans = h.spans();
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].name == "tcc");
  CHECK(spans[0].context.parent_id == kCallerSpan);
  CHECK(std::get<bool>(Attribute(spans[0], "settle.force_stopped")));
  CHECK(spans[0].status == SpanStatus::kError);
  CHECK(spans[0].status_message.find("stock never arrives") != std::string::npos);
  h.Advance(kSecond);
  CHECK(h.spans().size() == 1);  // reported once
}

TEST_CASE("a gRPC call's span names its status code", "[coordinator][trace][otlp]") {
  storage::GlobalRecord global;
  global.gid = "g5";
  global.trans_type = TransType::kSaga;
  storage::BranchRecord row;
  row.branch_id = "01";
  row.op = BranchOp::kAction;
  row.url = "127.0.0.1:50051/bank.Bank/Withdraw";
  row.attempts = 1;
  engine::BranchOutcome outcome{BranchResult::kUnknown, 0, "gRPC UNAVAILABLE"};
  outcome.grpc_code = 14;
  outcome.elapsed = std::chrono::microseconds(2500);
  const TimePoint at = FromUnixMillis(1'700'000'000'000);
  const Span span = AttemptSpan(global, row, ChildSpan(*Caller()), outcome, at, at);
  CHECK(std::get<std::int64_t>(Attribute(span, "rpc.grpc.status_code")) == 14);
  CHECK(std::get<std::string>(Attribute(span, "rpc.system")) == "grpc");
  CHECK_FALSE(HasAttribute(span, "http.response.status_code"));
  CHECK(span.end_unix_nano - span.start_unix_nano == 2'500'000);
}

}  // namespace
}  // namespace settle::drive
