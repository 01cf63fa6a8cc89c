#pragma once

#include <string>
#include <vector>

#include "settle/core/span.h"

namespace settle::telemetry {

// Who reports the spans: OpenTelemetry's resource attributes.
struct OtlpResource {
  std::string service_name = "settled";  // service.name
  std::string service_version;           // service.version; empty: left out
  std::string instance_id;               // service.instance.id; empty: left out
};

// The body of an OTLP/HTTP export of `spans` with the JSON encoding (Content-Type
// application/json): an ExportTraceServiceRequest in protobuf's JSON mapping as the OTLP
// specification (opentelemetry-proto, v1) defines it: one resourceSpans with one scopeSpans
// (scope "settle"); trace and span ids as lower-case hex, times as decimal strings of Unix
// nanoseconds, kind and status code as OTLP's numbers, int attributes as intValue strings.
std::string OtlpTraceRequest(const std::vector<Span>& spans, const OtlpResource& resource);

}  // namespace settle::telemetry
