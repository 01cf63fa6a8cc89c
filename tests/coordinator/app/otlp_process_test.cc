// settled exporting OpenTelemetry spans (--otlp-endpoint) to a real HTTP collector on
// 127.0.0.1: the spans of a saga joined to its caller's trace and to the participant's, and a
// collector that holds its answers costing spans (dropped, counted), never transactions.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "child_process.h"
#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "metrics_sample.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::SampleValue;
using testing::SettledProcess;

constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kCallerSpan = "00f067aa0ba902b7";

// Every span the collector received, by the order received.
std::vector<json> ReceivedSpans(const ParticipantServer& collector) {
  std::vector<json> spans;
  for (const auto& call : collector.CallsTo("/v1/traces")) {
    const json body = json::parse(call.body);
    for (const json& resource : body["resourceSpans"]) {
      for (const json& scope : resource["scopeSpans"]) {
        for (const json& span : scope["spans"]) spans.push_back(span);
      }
    }
  }
  return spans;
}

std::string AttributeText(const json& span, const std::string& key) {
  for (const json& a : span["attributes"]) {
    if (a["key"] == key) return a["value"].begin().value().get<std::string>();
  }
  return "";
}

json OneStepSaga(const std::string& gid, const ParticipantServer& p) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", p.Url("/withdraw")}, {"compensate", p.Url("/refund")}}}},
          {"payloads", {R"({"amount":30})"}},
          {"wait_result", true}};
}

double Metric(JsonClient& client, const std::string& series) {
  return SampleValue(client.Get("/api/metrics").body, series);
}

TEST_CASE(
    "a saga's spans reach the collector: its own a child of the caller's, each call's the "
    "parent the participant was given",
    "[process][trace][otlp]") {
  testing::TempDir dir;
  ParticipantServer collector;
  ParticipantServer p;
  SettledProcess settled(
      dir.File("settle.db"),
      {"--otlp-endpoint", "http://127.0.0.1:" + std::to_string(collector.port()),
       "--otlp-service-name", "payments-settled", "--otlp-header", "api-key=s3cret"});
  JsonClient client(settled.port());
  client.SetHeader("traceparent", std::string("00-") + kTrace + "-" + kCallerSpan + "-01");
  json saga = OneStepSaga("order-1", p);
  saga["steps"].push_back({{"action", p.Url("/deposit")}, {"compensate", p.Url("/undo")}});
  saga["payloads"].push_back(R"({"amount":30})");
  REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);

  std::vector<json> spans;
  REQUIRE(Eventually([&] {
    spans = ReceivedSpans(collector);
    return spans.size() == 3;
  }));
  const auto calls = collector.CallsTo("/v1/traces");
  CHECK(calls.at(0).headers.at("api-key") == "s3cret");
  const json resource = json::parse(calls.at(0).body)["resourceSpans"][0]["resource"];
  CHECK(resource["attributes"][0] ==
        json::parse(R"({"key":"service.name","value":{"stringValue":"payments-settled"}})"));

  json own;
  std::map<std::string, json> by_branch;
  for (const json& span : spans) {
    CHECK(span["traceId"] == kTrace);
    if (span["name"] == "saga") {
      own = span;
    } else {
      by_branch[AttributeText(span, "settle.branch_id")] = span;
    }
  }
  REQUIRE(own.is_object());
  CHECK(own["parentSpanId"] == kCallerSpan);
  CHECK(AttributeText(own, "settle.gid") == "order-1");
  REQUIRE(by_branch.size() == 2);
  // Each participant call was sent as a child of its attempt's span: the traceparent the
  // participant got names that span, which is a child of the saga's.
  for (const auto& [path, branch] :
       std::map<std::string, std::string>{{"/withdraw", "01"}, {"/deposit", "02"}}) {
    INFO(path);
    const auto received = p.CallsTo(path);
    REQUIRE(received.size() == 1);
    const json& attempt = by_branch.at(branch);
    CHECK(attempt["parentSpanId"] == own["spanId"]);
    CHECK(attempt["kind"] == 3);
    CHECK(received[0].headers.at("traceparent") ==
          std::string("00-") + kTrace + "-" + attempt["spanId"].get<std::string>() + "-01");
  }
  CHECK(Metric(client, "settle_otlp_spans_total{result=\"exported\"}") == 3);

  // What was posted, read against opentelemetry-proto's ExportTraceServiceRequest as a
  // Collector reads it (tests/interop/otlp/otlp_check.py).
  std::vector<std::string> check = {"/usr/bin/python3", SETTLE_OTLP_CHECK};
  for (std::size_t i = 0; i < calls.size(); ++i) {
    check.push_back(dir.File("body" + std::to_string(i) + ".json"));
    std::ofstream(check.back()) << calls[i].body;
  }
  const std::string log = dir.File("otlp_check.log");
  testing::ChildProcess checker(check, log);
  const int status = checker.Wait(std::chrono::seconds(60));
  INFO(testing::ReadFile(log));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE(
    "a collector that holds its answers costs spans, dropped and counted, and no transaction "
    "waits for it",
    "[process][trace][otlp]") {
  testing::TempDir dir;
  ParticipantServer collector;
  collector.SetDefault("/v1/traces", {.status = 200, .body = "{}", .held = true});
  ParticipantServer p;
  SettledProcess settled(dir.File("settle.db"),
                         {"--otlp-endpoint", "http://127.0.0.1:" + std::to_string(collector.port()),
                          "--otlp-queue", "8"});
  JsonClient client(settled.port());
  // The first saga's two spans go out in one batch, whose answer the collector holds.
  REQUIRE(client.PostJson("/api/settle/submit", OneStepSaga("first", p)).status == 200);
  REQUIRE(collector.WaitForHeld(1, std::chrono::seconds(20)));

  // 30 more sagas finish while it holds: 60 spans, of which the queue keeps 8.
  for (int i = 0; i < 30; ++i) {
    const auto answer =
        client.PostJson("/api/settle/submit", OneStepSaga("s" + std::to_string(i), p));
    INFO(answer.body);
    REQUIRE(answer.status == 200);
  }
  CHECK(p.CountCalls("/withdraw") == 31);
  CHECK(Metric(client, "settle_otlp_spans_queued") == 8);
  // 62 spans: the first batch's (the first saga's, 2 unless its commit outlasted a flush), 8
  // queued, the rest dropped.
  const double dropped = Metric(client, "settle_otlp_spans_total{result=\"dropped\"}");
  CHECK(dropped >= 52);
  CHECK(Metric(client, "settle_otlp_spans_total{result=\"exported\"}") == 0);

  collector.SetDefault("/v1/traces", {.status = 200, .body = "{}"});
  collector.Release();
  double exported = 0;
  CHECK(Eventually([&] {
    exported = Metric(client, "settle_otlp_spans_total{result=\"exported\"}");
    return exported + dropped == 62 && Metric(client, "settle_otlp_spans_queued") == 0;
  }));
  CHECK(ReceivedSpans(collector).size() == static_cast<std::size_t>(exported));
}

}  // namespace
}  // namespace settle
