// OTLP/HTTP's JSON encoding of spans, as opentelemetry-proto's ExportTraceServiceRequest maps
// to JSON: what a stock OpenTelemetry Collector's otlphttp receiver accepts.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "settle/telemetry/otlp_json.h"

namespace settle::telemetry {
namespace {

using nlohmann::json;

Span CallSpan() {
  Span span;
  span.context.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.context.span_id = "00f067aa0ba902b7";
  span.context.parent_id = "b7ad6b7169203331";
  span.context.flags = 1;
  span.context.state = "congo=t61rcWkgMzE";
  span.name = "action";
  span.kind = SpanKind::kClient;
  span.start_unix_nano = 1'700'000'000'123'000'000;
  span.end_unix_nano = 1'700'000'000'125'500'000;
  span.attributes = {{"settle.gid", std::string("g1")},
                     {"settle.attempt", std::int64_t{2}},
                     {"settle.force_stopped", true}};
  span.events = {SpanEvent{
      1'700'000'000'124'000'000, "aborting", {{"settle.reason", std::string("no stock")}}}};
  span.status = SpanStatus::kError;
  span.status_message = "HTTP 500: boom";
  return span;
}

TEST_CASE("a span is encoded as OTLP's JSON: hex ids, nanoseconds as strings, OTLP's numbers",
          "[telemetry][otlp]") {
  const json request = json::parse(OtlpTraceRequest({CallSpan()}, {}));
  const json& resource_spans = request.at("resourceSpans");
  REQUIRE(resource_spans.size() == 1);
  CHECK(resource_spans[0].at("resource").at("attributes") ==
        json::parse(R"([{"key":"service.name","value":{"stringValue":"settled"}}])"));
  const json& scope = resource_spans[0].at("scopeSpans").at(0);
  CHECK(scope.at("scope").at("name") == "settle");
  REQUIRE(scope.at("spans").size() == 1);
  const json& span = scope.at("spans").at(0);
  CHECK(span.at("traceId") == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(span.at("spanId") == "00f067aa0ba902b7");
  CHECK(span.at("parentSpanId") == "b7ad6b7169203331");
  CHECK(span.at("traceState") == "congo=t61rcWkgMzE");
  CHECK(span.at("name") == "action");
  CHECK(span.at("kind") == 3);  // SPAN_KIND_CLIENT
  CHECK(span.at("startTimeUnixNano") == "1700000000123000000");
  CHECK(span.at("endTimeUnixNano") == "1700000000125500000");
  CHECK(span.at("attributes") == json::parse(R"([
      {"key":"settle.gid","value":{"stringValue":"g1"}},
      {"key":"settle.attempt","value":{"intValue":"2"}},
      {"key":"settle.force_stopped","value":{"boolValue":true}}])"));
  CHECK(span.at("events") == json::parse(R"([{"timeUnixNano":"1700000000124000000",
      "name":"aborting","attributes":[{"key":"settle.reason","value":{"stringValue":"no stock"}}]}])"));
  CHECK(span.at("status") == json::parse(R"({"code":2,"message":"HTTP 500: boom"})"));
}

TEST_CASE("a root span has no parent, and a span that did not fail no status",
          "[telemetry][otlp]") {
  Span span = CallSpan();
  span.context.parent_id.clear();
  span.context.state.clear();
  span.events.clear();
  span.status = SpanStatus::kUnset;
  const json encoded =
      json::parse(OtlpTraceRequest({span}, {}))["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  CHECK_FALSE(encoded.contains("parentSpanId"));
  CHECK_FALSE(encoded.contains("traceState"));
  CHECK_FALSE(encoded.contains("events"));
  CHECK_FALSE(encoded.contains("status"));
}

TEST_CASE("the resource names the service, its version and its instance", "[telemetry][otlp]") {
  const json request = json::parse(
      OtlpTraceRequest({CallSpan(), CallSpan()}, {.service_name = "payments-coordinator",
                                                  .service_version = "1.4.0",
                                                  .instance_id = "host-a-17"}));
  CHECK(request["resourceSpans"][0]["resource"]["attributes"] == json::parse(R"([
      {"key":"service.name","value":{"stringValue":"payments-coordinator"}},
      {"key":"service.version","value":{"stringValue":"1.4.0"}},
      {"key":"service.instance.id","value":{"stringValue":"host-a-17"}}])"));
  CHECK(request["resourceSpans"][0]["scopeSpans"][0]["spans"].size() == 2);
}

TEST_CASE(
    "text that is not UTF-8 (a participant's URL, a reason) is replaced byte by byte, and the "
    "body always parses",
    "[telemetry][otlp]") {
  const auto message_of = [](const std::string& text) {
    Span span = CallSpan();
    span.status_message = text;
    const json encoded = json::parse(OtlpTraceRequest({span}, {}));
    return encoded["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["status"]["message"]
        .get<std::string>();
  };
  const std::string replacement = "\xEF\xBF\xBD";
  CHECK(message_of("bad \xff\xfe byte") == "bad " + replacement + replacement + " byte");
  CHECK(message_of("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");                            // kept as it is
  CHECK(message_of("\xC0\xAF") == replacement + replacement);                    // overlong '/'
  CHECK(message_of("\xED\xA0\x80") == replacement + replacement + replacement);  // a surrogate
  CHECK(message_of("cut \xE2\x82") == "cut " + replacement + replacement);       // truncated
  CHECK(message_of("\xF4\x90\x80\x80").size() == 4 * replacement.size());        // above U+10FFFF
  CHECK(message_of(std::string("q\"b\\n\x01\n\x7f", 8)) == std::string("q\"b\\n\x01\n\x7f", 8));
}

}  // namespace
}  // namespace settle::telemetry
