// W3C trace context through the coordinator: a transaction's span is a child of its caller's,
// each branch call a child of the transaction's, a new span per attempt.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "coordinator_harness.h"
#include "saga_requests.h"
#include "settle/core/ascii.h"
#include "settle/drive/coordinator.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Saga;
using testing::Unknown;

constexpr Duration kSecond{1000};
constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kCallerSpan = "00f067aa0ba902b7";

// The values of `name` among `headers`, in any case.
std::vector<std::string> HeaderValues(const std::map<std::string, std::string>& headers,
                                      std::string_view name) {
  std::vector<std::string> values;
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreAsciiCase(key, name)) values.push_back(value);
  }
  return values;
}

TEST_CASE(
    "a transaction's span is a child of its caller's, each call a child of it, a new span per "
    "attempt",
    "[coordinator][trace]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});
  engine::SubmitRequest saga = Saga("g1", 2);
  saga.trace = ParseTraceparent(std::string("00-") + kTrace + "-" + kCallerSpan + "-01", "k=v");
  REQUIRE(h.coordinator().Submit(std::move(saga)).ok());
  h.Advance(kSecond);  // the failed action is retried
  const storage::Transaction tx = h.Load("g1");
  CHECK(tx.global.status == GlobalStatus::kSucceed);
  const TraceContext& span = tx.global.trace;
  CHECK(span.trace_id == kTrace);
  CHECK(span.parent_id == kCallerSpan);
  CHECK(IsTraceHex(span.span_id, 16));
  CHECK(span.state == "k=v");

  const std::vector<engine::BranchCall> calls = h.caller().calls();
  REQUIRE(calls.size() == 3);  // 01 twice, 02 once
  std::set<std::string> spans = {span.span_id, kCallerSpan};
  for (const engine::BranchCall& call : calls) {
    INFO(call.branch_id);
    CHECK(call.trace.trace_id == kTrace);
    CHECK(call.trace.parent_id == span.span_id);
    CHECK(spans.insert(call.trace.span_id).second);  // a span of its own
    CHECK(HeaderValues(call.headers, "traceparent") ==
          std::vector<std::string>{call.trace.Traceparent()});
    CHECK(HeaderValues(call.headers, "tracestate") == std::vector<std::string>{"k=v"});
  }
}

TEST_CASE(
    "without a caller's span a transaction starts a trace, and settled's traceparent replaces "
    "one in branch_headers",
    "[coordinator][trace]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.branch_headers = {
      {"Traceparent", std::string("00-") + kTrace + "-" + kCallerSpan + "-01"},
      {"TRACESTATE", "forged=1"},
      {"x-tenant", "7"}};
  REQUIRE(h.coordinator().Submit(Saga("g2", 1, options)).ok());
  const storage::Transaction tx = h.Load("g2");
  CHECK(IsTraceHex(tx.global.trace.trace_id, 32));
  CHECK(tx.global.trace.trace_id != kTrace);
  CHECK(tx.global.trace.parent_id.empty());
  CHECK(tx.global.trace.flags == 1);
  // The stored branch_headers are the client's, as sent.
  CHECK(tx.global.options.branch_headers.size() == 3);
  const std::vector<engine::BranchCall> calls = h.caller().calls();
  REQUIRE(calls.size() == 1);
  CHECK(HeaderValues(calls[0].headers, "traceparent") ==
        std::vector<std::string>{calls[0].trace.Traceparent()});
  CHECK(HeaderValues(calls[0].headers, "tracestate").empty());
  CHECK(HeaderValues(calls[0].headers, "x-tenant") == std::vector<std::string>{"7"});
  CHECK(calls[0].trace.trace_id == tx.global.trace.trace_id);
}

}  // namespace
}  // namespace settle::drive
