#include "settled_metrics.h"

#include "settle/app/process_metrics.h"
#include "settle/engine/type_rules.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace settle::app {
namespace {

constexpr std::array<GlobalStatus, 3> kUnfinished = {
    GlobalStatus::kPrepared, GlobalStatus::kSubmitted, GlobalStatus::kAborting};

std::string Label(auto value) { return std::string(ToString(value)); }

void WriteUnfinished(metrics::PrometheusText& out, storage::Store& store) {
  auto counts = store.CountUnfinished();
  out.Family("settle_store_up", "gauge",
             "1 if the store answered the queries behind these metrics, 0 if it failed.");
  out.Sample("settle_store_up", {}, std::uint64_t{counts.ok() ? 1u : 0u});
  if (!counts) {
    spdlog::warn("metrics: cannot count unfinished transactions: {}", counts.status().ToString());
    return;
  }
  // Every (type, status) pair is written, zeros included, so that a series never vanishes.
  std::map<std::pair<TransType, GlobalStatus>, std::size_t> unfinished;
  std::map<TransType, std::size_t> stuck;
  for (const storage::UnfinishedCount& c : *counts) {
    unfinished[{c.trans_type, c.status}] += c.count;
    stuck[c.trans_type] += c.stuck;
  }
  out.Family("settle_transactions_unfinished", "gauge",
             "Stored transactions not yet succeed or failed, by type and status.");
  for (const engine::TypeRules* rules : engine::AllTypeRules()) {
    const TransType t = rules->type;
    for (GlobalStatus s : kUnfinished) {
      out.Sample("settle_transactions_unfinished", {{"type", Label(t)}, {"status", Label(s)}},
                 std::uint64_t{unfinished[{t, s}]});
    }
  }
  out.Family("settle_transactions_stuck", "gauge",
             "Unfinished transactions flagged stuck (a branch failed --stuck-after times in a "
             "row; retries go on), by type.");
  for (const engine::TypeRules* rules : engine::AllTypeRules()) {
    const TransType t = rules->type;
    out.Sample("settle_transactions_stuck", {{"type", Label(t)}}, std::uint64_t{stuck[t]});
  }
}

void WriteStore(metrics::PrometheusText& out, const storage::StoreStats& stats) {
  out.Family("settle_store_commits_total", "counter",
             "Database transactions committed by the store's group commit, each one sync.");
  out.Sample("settle_store_commits_total", {}, stats.commits);
  out.Family("settle_store_failed_commits_total", "counter",
             "Group commits that failed (every request in them got a 503).");
  out.Sample("settle_store_failed_commits_total", {}, stats.failed_commits);
  out.Family("settle_store_batches_total", "counter",
             "Requests' write batches applied by the store (group commit folds many into one "
             "commit).");
  out.Sample("settle_store_batches_total", {}, stats.batches);
  out.Family("settle_store_commit_duration_seconds", "histogram",
             "Time of each group commit, from BEGIN to the synced COMMIT.");
  out.Histogram("settle_store_commit_duration_seconds", {}, stats.commit_time, 1e6);
  out.Family("settle_store_commit_batches", "histogram",
             "Write batches per group commit (the group commit's batch size).");
  out.Histogram("settle_store_commit_batches", {}, stats.batches_per_commit);
  out.Family("settle_store_wal_pages_written_total", "counter",
             "SQLite WAL pages appended by commits (0 on PostgreSQL).");
  out.Sample("settle_store_wal_pages_written_total", {}, stats.wal_pages_written);
  out.Family("settle_store_checkpoints_total", "counter",
             "SQLite WAL checkpoints (none on PostgreSQL), by who ran them: the background "
             "checkpointer or the writer "
             "(when the WAL outgrew its bound).");
  out.Sample("settle_store_checkpoints_total", {{"by", "background"}},
             stats.background_checkpoints);
  out.Sample("settle_store_checkpoints_total", {{"by", "writer"}}, stats.writer_checkpoints);
}

// Written with or without a webhook (zeros without one), so that an alerting rule on it
// works before the webhook is configured.
void WriteAlerts(metrics::PrometheusText& out, const WebhookAlerts* alerts) {
  out.Family("settle_alerts_total", "counter",
             "Stuck-transaction alerts for the webhook (--alert-webhook), by result: sent, "
             "failed (every attempt failed) or dropped (the queue was full).");
  out.Sample("settle_alerts_total", {{"result", "sent"}},
             alerts == nullptr ? std::uint64_t{0} : alerts->sent());
  out.Sample("settle_alerts_total", {{"result", "failed"}},
             alerts == nullptr ? std::uint64_t{0} : alerts->failed());
  out.Sample("settle_alerts_total", {{"result", "dropped"}},
             alerts == nullptr ? std::uint64_t{0} : alerts->dropped());
}

// Written with or without an OTLP endpoint (zeros without one), as the alerts are.
void WriteSpans(metrics::PrometheusText& out, const telemetry::OtlpExporter* spans) {
  out.Family("settle_otlp_spans_total", "counter",
             "Spans for the OpenTelemetry collector (--otlp-endpoint), by result: exported, "
             "failed (the collector did not take their batch) or dropped (the queue was full).");
  out.Sample("settle_otlp_spans_total", {{"result", "exported"}},
             spans == nullptr ? std::uint64_t{0} : spans->exported());
  out.Sample("settle_otlp_spans_total", {{"result", "failed"}},
             spans == nullptr ? std::uint64_t{0} : spans->failed());
  out.Sample("settle_otlp_spans_total", {{"result", "dropped"}},
             spans == nullptr ? std::uint64_t{0} : spans->dropped());
  out.Family("settle_otlp_spans_queued", "gauge",
             "Spans waiting to be sent to the OpenTelemetry collector.");
  out.Sample("settle_otlp_spans_queued", {},
             spans == nullptr ? std::uint64_t{0} : static_cast<std::uint64_t>(spans->queued()));
}

// One series per gate of a participant host (at most --max-hosts; gates live in memory only).
void WriteHosts(metrics::PrometheusText& out, const calls::HostGates& gates) {
  const std::vector<calls::HostView> hosts = gates.Hosts();
  out.Family("settle_circuit_state", "gauge",
             "The circuit of each participant host (scheme://host:port): 0 closed, 1 open "
             "(its calls wait), 2 probing (one call is out to learn whether it is back).");
  for (const calls::HostView& h : hosts) {
    std::uint64_t state = 0;
    if (h.state == engine::CircuitState::kOpen) state = 1;
    if (h.state == engine::CircuitState::kProbing) state = 2;
    out.Sample("settle_circuit_state", {{"host", h.host}}, state);
  }
  out.Family("settle_circuit_opens_total", "counter",
             "Times the circuit of each participant host opened (--circuit-failures "
             "consecutive connection failures, timeouts or 5xx).");
  for (const calls::HostView& h : hosts) {
    out.Sample("settle_circuit_opens_total", {{"host", h.host}}, h.opens);
  }
  out.Family("settle_circuit_waiting", "gauge",
             "Transactions held for each participant host: its circuit is open, or they wait "
             "for their turn in the paced release after it closed, or for a slot under "
             "--host-max-in-flight.");
  for (const calls::HostView& h : hosts) {
    out.Sample("settle_circuit_waiting", {{"host", h.host}}, std::uint64_t{h.waiting});
  }
  out.Family("settle_host_calls_in_flight", "gauge",
             "Branch calls out to each participant host now (at most --host-max-in-flight).");
  for (const calls::HostView& h : hosts) {
    out.Sample("settle_host_calls_in_flight", {{"host", h.host}},
               static_cast<std::uint64_t>(std::max(h.in_flight, 0)));
  }
  out.Family("settle_host_held_at_cap_total", "counter",
             "Calls to each participant host held back because --host-max-in-flight calls "
             "were out (the transaction waits for a free slot).");
  for (const calls::HostView& h : hosts) {
    out.Sample("settle_host_held_at_cap_total", {{"host", h.host}}, h.held_at_cap);
  }
}

void WriteClock(metrics::PrometheusText& out, const drive::ClockReading& clock) {
  const metrics::MetricLabels reference = {{"reference", clock.reference}};
  out.Family("settle_clock_offset_seconds", "gauge",
             "The reference clock (the database's, with several instances on PostgreSQL) minus "
             "this host's wall clock, at the last reading: positive when the host is behind. "
             "Every time settled stores is on the reference clock.");
  out.Sample("settle_clock_offset_seconds", reference,
             static_cast<double>(clock.offset.count()) / 1000.0);
  out.Family("settle_clock_offset_error_seconds", "gauge",
             "How far the last reading of the reference clock may be off (half its round trip).");
  out.Sample("settle_clock_offset_error_seconds", reference,
             static_cast<double>(clock.error.count()) / 1000.0);
  out.Family("settle_clock_following_seconds", "gauge",
             "What settled's clock still has to catch up with its reference after a step (it "
             "follows at 1% of the time passing, so timeouts keep their length).");
  out.Sample("settle_clock_following_seconds", reference,
             static_cast<double>(clock.following.count()) / 1000.0);
  out.Family("settle_clock_claiming", "gauge",
             "1 while this instance claims transactions; 0 while its host's clock is beyond "
             "--max-clock-skew from the database's.");
  out.Sample("settle_clock_claiming", reference, std::uint64_t{clock.claiming ? 1u : 0u});
}

// Every (port, reason) pair, zeros included; the status is the reason's own.
void WriteRefusals(metrics::PrometheusText& out, const api::RefusalLog& refusals) {
  out.Family("settle_api_refusals_total", "counter",
             "Requests settled's APIs refused for want of access, by port (http, grpc), "
             "status (401: UNAUTHENTICATED, 403: PERMISSION_DENIED) and reason.");
  for (api::ApiPort port : api::kApiPorts) {
    for (api::RefusalReason reason : api::kRefusalReasons) {
      out.Sample("settle_api_refusals_total",
                 {{"port", Label(port)},
                  {"status", std::to_string(api::StatusOf(reason))},
                  {"reason", Label(reason)}},
                 refusals.refused(port, reason));
    }
  }
  out.Family("settle_tls_handshake_failures_total", "counter",
             "TLS handshakes the API's ports failed (no client certificate where one is "
             "required, one from another CA or expired, a client that is not speaking TLS)");
  for (const api::ApiPort port : api::kApiPorts) {
    out.Sample("settle_tls_handshake_failures_total", {{"port", Label(port)}},
               refusals.handshake_failures(port));
  }
}

// What the gRPC API's bounds refused and cut (docs/operations.md, "Hostile clients").
void WriteGrpcBounds(metrics::PrometheusText& out, const grpc_api::GrpcServerCounts& grpc) {
  out.Family("settle_grpc_connections", "gauge",
             "Connections to the gRPC API open now (at most --grpc-max-connections).");
  out.Sample("settle_grpc_connections", {}, static_cast<std::uint64_t>(grpc.connections.open));
  out.Family("settle_grpc_connections_refused_total", "counter",
             "Connections to the gRPC API closed as soon as accepted, by the cap they met: "
             "max_connections (--grpc-max-connections) or max_connections_per_peer "
             "(--grpc-max-connections-per-peer).");
  out.Sample("settle_grpc_connections_refused_total", {{"cap", "max_connections"}},
             grpc.connections.refused_total);
  out.Sample("settle_grpc_connections_refused_total", {{"cap", "max_connections_per_peer"}},
             grpc.connections.refused_per_peer);
  out.Family("settle_grpc_accept_failures_total", "counter",
             "Connections the gRPC port could not accept (out of descriptors or memory); it "
             "pauses 100 ms after each.");
  out.Sample("settle_grpc_accept_failures_total", {}, grpc.connections.accept_failures);
  out.Family("settle_grpc_calls_waiting", "gauge",
             "gRPC calls whose request message has not wholly arrived yet.");
  out.Sample("settle_grpc_calls_waiting", {}, static_cast<std::uint64_t>(grpc.waiting_calls));
  out.Family("settle_grpc_calls_cut_total", "counter",
             "gRPC calls ended before their request message was read, by reason: "
             "first_message_timeout (DEADLINE_EXCEEDED, --grpc-first-message-timeout) or "
             "memory_limit (RESOURCE_EXHAUSTED: as many calls waited as --grpc-memory-limit "
             "allows).");
  out.Sample("settle_grpc_calls_cut_total", {{"reason", "first_message_timeout"}},
             grpc.first_message_timeouts);
  out.Sample("settle_grpc_calls_cut_total", {{"reason", "memory_limit"}}, grpc.waiting_refusals);
}

// Written with or without a limit (zeros without one), so that an alerting rule works first.
void WriteRateLimited(metrics::PrometheusText& out, const api::RateLimiter& limiter) {
  out.Family("settle_api_rate_limited_total", "counter",
             "Requests settled's APIs refused because their caller (a token's name, else the "
             "peer's address) was over --rate-limit, by port (http: 429, grpc: "
             "RESOURCE_EXHAUSTED).");
  for (api::ApiPort port : api::kApiPorts) {
    out.Sample("settle_api_rate_limited_total", {{"port", Label(port)}}, limiter.refused(port));
  }
}

void WriteBuild(metrics::PrometheusText& out, const BuildInfo& build) {
  out.Family("settle_build_info", "gauge",
             "Always 1; its labels say which build runs: version, commit, build type.");
  out.Sample("settle_build_info",
             {{"version", std::string(build.version)},
              {"commit", std::string(build.commit)},
              {"build_type", std::string(build.build_type)}},
             std::uint64_t{1});
}

}  // namespace

void WriteSettledMetrics(metrics::PrometheusText& out, const SettledMetricsSources& sources) {
  const drive::Scheduler& scheduler = sources.scheduler;
  sources.coordinator.WriteTo(out);
  WriteUnfinished(out, sources.store);
  out.Family("settle_scheduler_running_passes", "gauge", "Transactions being driven right now.");
  out.Sample("settle_scheduler_running_passes", {}, std::uint64_t{scheduler.Running()});
  out.Family("settle_scheduler_waiting", "gauge",
             "Unfinished transactions waiting for their next due time (a retry, a timeout).");
  out.Sample("settle_scheduler_waiting", {}, std::uint64_t{scheduler.Scheduled()});
  WriteStore(out, sources.store.Stats());
  out.Family("settle_retention_deleted_total", "counter",
             "Finished transactions deleted by retention (--retention).");
  out.Sample("settle_retention_deleted_total", {}, sources.retention.deleted());
  WriteAlerts(out, sources.alerts);
  WriteSpans(out, sources.spans);
  if (sources.hosts != nullptr) WriteHosts(out, *sources.hosts);
  if (sources.clock) WriteClock(out, *sources.clock);
  if (sources.refusals != nullptr) WriteRefusals(out, *sources.refusals);
  if (sources.grpc) WriteGrpcBounds(out, *sources.grpc);
  if (sources.rate_limiter != nullptr) WriteRateLimited(out, *sources.rate_limiter);
  WriteBuild(out, sources.build);
  if (const std::optional<ProcessStats> process = ReadProcessStats()) {
    WriteProcessMetrics(out, *process);
  }
}

}  // namespace settle::app
