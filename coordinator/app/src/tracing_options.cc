// The options of --help's "Tracing" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <string>
#include <utility>

#include "settle/core/file_text.h"
#include "settle/telemetry/otlp_exporter.h"
#include "settle/telemetry/otlp_headers.h"

namespace settle::app {

void AddTracingOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kTracing);
  app.add_option("--otlp-endpoint", text.otlp_endpoint,
                 "Export spans (one per transaction, one per branch call) to this OpenTelemetry "
                 "collector over OTLP/HTTP (JSON): an http(s):// base URL, spans are POSTed to "
                 "its /v1/traces (as OTEL_EXPORTER_OTLP_ENDPOINT, its default, means it)")
      ->envname("OTEL_EXPORTER_OTLP_ENDPOINT");
  app.add_option("--otlp-header", text.otlp_headers,
                 "name=value sent with every export (a collector's API key, say); repeatable, "
                 "or comma-separated as in OTEL_EXPORTER_OTLP_HEADERS, its default; other users "
                 "can see flags in the process list: keep keys in --otlp-headers-file")
      ->envname("OTEL_EXPORTER_OTLP_HEADERS")
      ->delimiter(',');
  app.add_option("--otlp-headers-file", text.otlp_headers_file,
                 "File of \"name=value\" lines, one header per line sent with every export "
                 "after those of --otlp-header (the value as written, not percent-decoded; "
                 "lines starting with # are comments); --dump-config shows its path, never "
                 "its values")
      ->envname("SETTLE_OTLP_HEADERS_FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--otlp-service-name", c.otlp_service_name,
                 "The service.name spans report (default: OTEL_SERVICE_NAME, or settled)")
      ->envname("OTEL_SERVICE_NAME")
      ->capture_default_str();
  app.add_option("--otlp-queue", c.otlp_queue,
                 "Spans waiting for the collector beyond this are dropped (and counted), so that "
                 "a slow collector never slows a transaction")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
}

Status ApplyTracing(const ParsedText& text, ServerConfig& c) {
  if (!text.otlp_endpoint.empty()) {
    auto url = telemetry::OtlpTracesUrl(text.otlp_endpoint);
    if (!url) {
      return Status::InvalidArgument("--otlp-endpoint '" + text.otlp_endpoint +
                                     "': " + url.status().message());
    }
    c.otlp_traces_url = std::move(*url);
  }
  c.otlp_headers.clear();
  for (const std::string& entry : text.otlp_headers) {
    auto headers = telemetry::ParseOtlpHeaders(entry);
    if (!headers) return Status::InvalidArgument("--otlp-header: " + headers.status().message());
    c.otlp_headers.insert(c.otlp_headers.end(), headers->begin(), headers->end());
  }
  if (!text.otlp_headers_file.empty()) {
    Result<std::string> lines = ReadFileText(text.otlp_headers_file);
    if (!lines) return Status::InvalidArgument("--otlp-headers-file: " + lines.status().message());
    auto headers = telemetry::ParseOtlpHeaderLines(*lines);
    if (!headers) {
      return Status::InvalidArgument("--otlp-headers-file " + text.otlp_headers_file + ": " +
                                     headers.status().message());
    }
    c.otlp_headers.insert(c.otlp_headers.end(), headers->begin(), headers->end());
  }
  if (c.otlp_service_name.empty()) {
    return Status::InvalidArgument("--otlp-service-name may not be empty");
  }
  return Status::Ok();
}

std::string RedactedOtlpHeaderLine(const ParsedText& text) {
  std::string names;
  for (const std::string& entry : text.otlp_headers) {
    // Parsed already (ApplyTracing): each entry is one or more valid name=value pairs.
    auto headers = telemetry::ParseOtlpHeaders(entry);
    if (!headers) continue;
    for (const auto& [name, value] : *headers) {
      names += (names.empty() ? "\"" : ", \"") + name + "=<redacted>\"";
    }
  }
  if (names.empty()) return "# otlp-header=\"\"";
  return "# otlp-header=[" + names +
         "]  # values redacted: put them in an --otlp-headers-file, which is not shown";
}

}  // namespace settle::app
