// W3C trace context over the HTTP API: the request that starts a transaction names the caller's
// span, /query shows the transaction's, and each branch call carries a child of it to the
// participant. In-process settled, real sockets.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "in_process_settled.h"
#include "participant_server.h"
#include "settle/core/trace_context.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::JsonClient;

constexpr const char* kTrace = "0af7651916cd43dd8448eb211c80319c";
constexpr const char* kCallerSpan = "b7ad6b7169203331";

// The traceparent and tracestate a participant's call carried; empty when none.
std::pair<std::string, std::string> TraceHeadersOf(const testing::ReceivedCall& call) {
  std::pair<std::string, std::string> found;
  for (const auto& [name, value] : call.headers) {
    if (name == "traceparent" || name == "Traceparent") found.first = value;
    if (name == "tracestate" || name == "Tracestate") found.second = value;
  }
  return found;
}

TEST_CASE(
    "a saga submitted with a traceparent is a span of that trace, and each of its calls a "
    "child span the participant receives",
    "[http][trace]") {
  InProcessSettled s;
  testing::ParticipantServer p;
  JsonClient client(s.port());
  client.SetHeader("traceparent", std::string("00-") + kTrace + "-" + kCallerSpan + "-01");
  client.SetHeader("tracestate", "shop=order-7");
  const json saga = {{"gid", "traced-1"},
                     {"trans_type", "saga"},
                     {"wait_result", true},
                     {"steps",
                      {{{"action", p.Url("/pay")}, {"compensate", p.Url("/refund")}},
                       {{"action", p.Url("/ship")}, {"compensate", p.Url("/unship")}}}},
                     {"payloads", {"{}", "{}"}}};
  REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  const json tx = s.Query("traced-1")["transaction"];
  REQUIRE(tx["status"] == "succeed");
  const json trace = tx["trace"];
  CHECK(trace["trace_id"] == kTrace);
  CHECK(trace["parent_span_id"] == kCallerSpan);
  CHECK(trace["tracestate"] == "shop=order-7");
  const std::string span = trace["span_id"];
  CHECK(IsTraceHex(span, 16));
  CHECK(trace["traceparent"] == std::string("00-") + kTrace + "-" + span + "-01");

  std::set<std::string> spans = {span, kCallerSpan};
  for (const char* path : {"/pay", "/ship"}) {
    const auto calls = p.CallsTo(path);
    REQUIRE(calls.size() == 1);
    const auto [traceparent, tracestate] = TraceHeadersOf(calls[0]);
    INFO(path << " " << traceparent);
    const std::optional<TraceContext> got = ParseTraceparent(traceparent, tracestate);
    REQUIRE(got);
    CHECK(got->trace_id == kTrace);
    CHECK(got->flags == 1);
    CHECK(got->state == "shop=order-7");
    CHECK(spans.insert(got->span_id).second);  // the call's own span
  }
}

TEST_CASE(
    "without a traceparent, or with one W3C says to ignore, a transaction starts a trace of "
    "its own",
    "[http][trace]") {
  InProcessSettled s;
  testing::ParticipantServer p;
  for (const std::string& sent :
       {std::string(), std::string("00-") + std::string(32, '0') + "-" + kCallerSpan + "-01",
        std::string("00-0AF7651916CD43DD8448EB211C80319C-") + kCallerSpan + "-01",
        std::string("00-") + kTrace + "-" + kCallerSpan}) {
    INFO(sent);
    JsonClient client(s.port());
    if (!sent.empty()) client.SetHeader("traceparent", sent);
    const std::string gid = "untraced-" + std::to_string(sent.size());
    REQUIRE(client.PostJson("/api/settle/prepare", {{"gid", gid}, {"trans_type", "tcc"}}).status ==
            200);
    const json trace = s.Query(gid)["transaction"]["trace"];
    CHECK(IsTraceHex(trace["trace_id"].get<std::string>(), 32));
    CHECK(trace["trace_id"] != kTrace);
    CHECK(trace["parent_span_id"] == "");
  }
}

}  // namespace
}  // namespace settle
