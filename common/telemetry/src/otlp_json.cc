#include "settle/telemetry/otlp_json.h"

#include <nlohmann/json.hpp>

namespace settle::telemetry {
namespace {

using nlohmann::json;

json AnyValue(const SpanValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return {{"stringValue", *text}};
  if (const auto* number = std::get_if<std::int64_t>(&value)) {
    return {{"intValue", std::to_string(*number)}};  // int64: a string in protobuf's JSON
  }
  return {{"boolValue", std::get<bool>(value)}};
}

json KeyValues(const SpanAttributes& attributes) {
  json list = json::array();
  for (const auto& [key, value] : attributes) {
    list.push_back({{"key", key}, {"value", AnyValue(value)}});
  }
  return list;
}

json SpanJson(const Span& span) {
  json out = {{"traceId", span.context.trace_id},
              {"spanId", span.context.span_id},
              {"name", span.name},
              {"kind", static_cast<int>(span.kind)},
              {"startTimeUnixNano", std::to_string(span.start_unix_nano)},
              {"endTimeUnixNano", std::to_string(span.end_unix_nano)},
              {"attributes", KeyValues(span.attributes)}};
  if (!span.context.parent_id.empty()) out["parentSpanId"] = span.context.parent_id;
  if (!span.context.state.empty()) out["traceState"] = span.context.state;
  if (!span.events.empty()) {
    json events = json::array();
    for (const SpanEvent& event : span.events) {
      json e = {{"timeUnixNano", std::to_string(event.time_unix_nano)}, {"name", event.name}};
      if (!event.attributes.empty()) e["attributes"] = KeyValues(event.attributes);
      events.push_back(std::move(e));
    }
    out["events"] = std::move(events);
  }
  if (span.status != SpanStatus::kUnset) {
    json status = {{"code", static_cast<int>(span.status)}};
    if (!span.status_message.empty()) status["message"] = span.status_message;
    out["status"] = std::move(status);
  }
  return out;
}

}  // namespace

std::string OtlpTraceRequest(const std::vector<Span>& spans, const OtlpResource& resource) {
  SpanAttributes resource_attributes = {{"service.name", resource.service_name}};
  if (!resource.service_version.empty()) {
    resource_attributes.emplace_back("service.version", resource.service_version);
  }
  if (!resource.instance_id.empty()) {
    resource_attributes.emplace_back("service.instance.id", resource.instance_id);
  }
  json list = json::array();
  for (const Span& span : spans) list.push_back(SpanJson(span));
  const json request = {
      {"resourceSpans",
       json::array({{{"resource", {{"attributes", KeyValues(resource_attributes)}}},
                     {"scopeSpans", json::array({{{"scope", {{"name", "settle"}}},
                                                  {"spans", std::move(list)}}})}}})}};
  // A participant's URL or a reason may hold bytes that are not UTF-8: replaced, never thrown.
  return request.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace settle::telemetry
