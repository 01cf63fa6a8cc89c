#pragma once

#include <optional>

#include "settle/api/rate_limiter.h"
#include "settle/api/refusal_log.h"
#include "settle/app/retention.h"
#include "settle/app/webhook_alerts.h"
#include "settle/calls/host_gates.h"
#include "settle/core/build_info.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/drive/database_clock.h"
#include "settle/drive/scheduler.h"
#include "settle/grpc_api/grpc_server.h"
#include "settle/metrics/prometheus_text.h"
#include "settle/storage/store.h"
#include "settle/telemetry/otlp_exporter.h"

namespace settle::app {

// Everything settled exports at /api/metrics except the HTTP metrics: the coordinator's
// counters, the unfinished and stuck transactions as stored, the scheduler's load, and the
// store's commits, the gate of each participant host, the APIs' refusals and failed TLS
// handshakes, the gRPC API's connections and calls refused or cut at its bounds. A store that
// cannot be read is reported by settle_store_up 0, not by failing the scrape.
struct SettledMetricsSources {
  const drive::CoordinatorMetrics& coordinator;
  storage::Store& store;
  const drive::Scheduler& scheduler;
  const Retention& retention;
  const WebhookAlerts* alerts;  // null without a webhook
  const BuildInfo& build;
  const calls::HostGates* hosts = nullptr;         // null: no per-host metrics
  std::optional<drive::ClockReading> clock;        // how this instance's clock stands
  const api::RefusalLog* refusals = nullptr;       // null: no refusal metrics
  std::optional<grpc_api::GrpcServerCounts> grpc;  // the gRPC API's bounds; none when it is off
  const api::RateLimiter* rate_limiter = nullptr;  // null: no rate-limit metrics
  const telemetry::OtlpExporter* spans = nullptr;  // null without --otlp-endpoint
};

void WriteSettledMetrics(metrics::PrometheusText& out, const SettledMetricsSources& sources);

}  // namespace settle::app
