// The OTLP exporter against a real HTTP collector on 127.0.0.1: batches, the bounded queue that
// drops rather than waits, OTLP's retryable answers, the headers, and the flush at Stop.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "eventually.h"
#include "participant_server.h"
#include "settle/async/io_threads.h"
#include "settle/core/ascii.h"
#include "settle/telemetry/otlp_exporter.h"

namespace settle::telemetry {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::ParticipantServer;
using testing::ScriptedAnswer;

constexpr const char* kPath = "/v1/traces";

Span NamedSpan(const std::string& name) {
  Span span;
  span.context.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.context.span_id = "00f067aa0ba902b7";
  span.context.flags = 1;
  span.name = name;
  return span;
}

// The names of the spans the collector received, in the order received.
std::vector<std::string> ReceivedNames(const ParticipantServer& collector) {
  std::vector<std::string> names;
  for (const auto& call : collector.CallsTo(kPath)) {
    const json body = json::parse(call.body);
    for (const json& span : body["resourceSpans"][0]["scopeSpans"][0]["spans"]) {
      names.push_back(span["name"]);
    }
  }
  return names;
}

// An exporter on I/O threads of its own, sending to `collector`.
struct Exporting {
  explicit Exporting(const ParticipantServer& collector, OtlpSettings settings) {
    auto made = net::Client::Create();
    REQUIRE(made);
    client = std::move(*made);
    auto exporter = OtlpExporter::Create(collector.Url(kPath), clock, io.executor(), *client,
                                         std::move(settings));
    REQUIRE(exporter);
    spans = std::move(*exporter);
    io.Start();
  }
  ~Exporting() {
    spans->Stop();
    io.Stop();
  }
  SystemClock clock;
  async::IoThreads io{1};
  std::unique_ptr<net::Client> client;
  std::unique_ptr<OtlpExporter> spans;
};

TEST_CASE("a full batch goes at once, and what is left goes when Stop flushes it",
          "[telemetry][otlp]") {
  ParticipantServer collector;
  // A batch waits an hour to fill: only a full one, or Stop, sends.
  Exporting e(collector, {.max_batch = 2, .flush_interval = Duration(3'600'000)});
  for (const char* name : {"a", "b", "c", "d", "e"}) e.spans->Export(NamedSpan(name));
  REQUIRE(collector.WaitForCalls(kPath, 2));
  CHECK(ReceivedNames(collector) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(e.spans->queued() == 1);
  e.spans->Stop();
  CHECK(ReceivedNames(collector) == std::vector<std::string>{"a", "b", "c", "d", "e"});
  CHECK(e.spans->exported() == 5);
  CHECK(e.spans->dropped() == 0);
  const auto calls = collector.CallsTo(kPath);
  REQUIRE(calls.size() == 3);
  for (const auto& call : calls) {
    CHECK(call.method == "POST");
    bool json_type = false;
    for (const auto& [name, value] : call.headers) {
      if (EqualsIgnoreAsciiCase(name, "content-type")) json_type = value == "application/json";
    }
    CHECK(json_type);
  }
}

TEST_CASE("a batch that is not full goes once it has waited the flush interval",
          "[telemetry][otlp]") {
  ParticipantServer collector;
  Exporting e(collector, {.max_batch = 100, .flush_interval = Duration(20)});
  e.spans->Export(NamedSpan("lonely"));
  REQUIRE(collector.WaitForCalls(kPath, 1));
  CHECK(ReceivedNames(collector) == std::vector<std::string>{"lonely"});
  CHECK(Eventually([&] { return e.spans->exported() == 1; }));
}

TEST_CASE(
    "while the collector holds its answer, the queue fills and spans beyond it are dropped and "
    "counted, never waited for",
    "[telemetry][otlp]") {
  ParticipantServer collector;
  collector.SetDefault(kPath, ScriptedAnswer{.status = 200, .body = "{}", .held = true});
  Exporting e(collector, {.max_queued = 4, .max_batch = 1, .flush_interval = Duration(1)});
  e.spans->Export(NamedSpan("first"));
  REQUIRE(collector.WaitForHeld(1));  // the first batch is out, its answer held
  for (int i = 0; i < 10; ++i) e.spans->Export(NamedSpan("s" + std::to_string(i)));
  CHECK(e.spans->queued() == 4);
  CHECK(e.spans->dropped() == 6);
  collector.SetDefault(kPath, ScriptedAnswer{.status = 200, .body = "{}"});
  collector.Release();
  REQUIRE(Eventually([&] { return e.spans->exported() == 5; }));
  CHECK(ReceivedNames(collector) == std::vector<std::string>{"first", "s0", "s1", "s2", "s3"});
  CHECK(e.spans->dropped() == 6);
}

TEST_CASE("a batch the collector answers 503 or 429 is sent again, one it refuses is not",
          "[telemetry][otlp]") {
  ParticipantServer collector;
  collector.Script(kPath, {{.status = 503, .body = "busy"},
                           {.status = 429, .body = "slow down"},
                           {.status = 200, .body = "{}"},
                           {.status = 400, .body = "bad span"}});
  Exporting e(collector,
              {.max_batch = 1, .flush_interval = Duration(1), .retry_delay = Duration(1)});
  e.spans->Export(NamedSpan("retried"));
  REQUIRE(Eventually([&] { return e.spans->exported() == 1; }));
  CHECK(collector.CountCalls(kPath) == 3);
  e.spans->Export(NamedSpan("refused"));
  REQUIRE(Eventually([&] { return e.spans->failed() == 1; }));
  CHECK(collector.CountCalls(kPath) == 4);  // a 400 is not retried
  CHECK(e.spans->exported() == 1);
}

TEST_CASE("a collector that cannot be reached fails its batches, counted, after the attempts",
          "[telemetry][otlp]") {
  int port = 0;
  {
    ParticipantServer gone;
    port = gone.port();
  }  // nothing listens there now
  ParticipantServer unused;
  auto made = net::Client::Create();
  REQUIRE(made);
  SystemClock clock;
  async::IoThreads io{1};
  auto exporter = OtlpExporter::Create(
      "http://127.0.0.1:" + std::to_string(port) + kPath, clock, io.executor(), **made,
      {.max_batch = 1, .flush_interval = Duration(1), .attempts = 2, .retry_delay = Duration(1)});
  REQUIRE(exporter);
  io.Start();
  (*exporter)->Export(NamedSpan("lost"));
  CHECK(Eventually([&] { return (*exporter)->failed() == 1; }));
  (*exporter)->Stop();
  io.Stop();
  CHECK((*exporter)->exported() == 0);
}

TEST_CASE("the headers configured go with every export", "[telemetry][otlp]") {
  ParticipantServer collector;
  Exporting e(collector, {.max_batch = 1,
                          .flush_interval = Duration(1),
                          .headers = {{"api-key", "s3cret"}, {"x-tenant", "7"}}});
  e.spans->Export(NamedSpan("x"));
  REQUIRE(collector.WaitForCalls(kPath, 1));
  const auto headers = collector.CallsTo(kPath).at(0).headers;
  CHECK(headers.at("api-key") == "s3cret");
  CHECK(headers.at("x-tenant") == "7");
}

TEST_CASE(
    "a batch still on its way when Stop's grace runs out is cut then, failed: a collector that "
    "holds its answer does not hold up the stop",
    "[telemetry][otlp]") {
  ParticipantServer collector;
  collector.SetDefault(kPath, ScriptedAnswer{.status = 200, .body = "{}", .held = true});
  Exporting e(collector,
              {.max_batch = 1, .flush_interval = Duration(1), .timeout = Duration(60'000)});
  e.spans->Export(NamedSpan("held"));
  REQUIRE(collector.WaitForHeld(1));

  const auto stopped_at = std::chrono::steady_clock::now();
  e.spans->Stop(Duration(300));
  const auto took =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - stopped_at);
  CHECK(took >= Duration(300));    // the batch had its grace
  CHECK(took < Duration(10'000));  // and the stop did not wait for the 60 s timeout
  CHECK(e.spans->failed() == 1);
  CHECK(e.spans->exported() == 0);
  CHECK(collector.CountCalls(kPath) == 1);
  collector.Release();
}

TEST_CASE("after Stop, spans are dropped and counted", "[telemetry][otlp]") {
  ParticipantServer collector;
  Exporting e(collector, {});
  e.spans->Stop();
  e.spans->Export(NamedSpan("late"));
  CHECK(e.spans->dropped() == 1);
  CHECK(collector.Calls().empty());
}

TEST_CASE("an endpoint is a base URL: spans go to its path and /v1/traces", "[telemetry][otlp]") {
  CHECK(*OtlpTracesUrl("http://collector:4318") == "http://collector:4318/v1/traces");
  CHECK(*OtlpTracesUrl("http://collector:4318/") == "http://collector:4318/v1/traces");
  CHECK(*OtlpTracesUrl("https://otel.example/ingest") == "https://otel.example/ingest/v1/traces");
  CHECK(OtlpTracesUrl("collector:4318").status().code() == StatusCode::kInvalidArgument);
  CHECK(OtlpTracesUrl("ftp://collector").status().code() == StatusCode::kInvalidArgument);
  CHECK(OtlpTracesUrl("http://collector:4318/?key=1").status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace settle::telemetry
