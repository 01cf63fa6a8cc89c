// SettledServer: its start, step by step on its parts (settled_parts.h), the settings it
// logs once serving, and what it answers of them.
#include "settle/app/settled_server.h"

#include <spdlog/spdlog.h>

#include "settle/app/grpc_log.h"
#include "settled_parts.h"

namespace settle::app {

Result<std::unique_ptr<SettledServer>> SettledServer::Start(const ServerConfig& config,
                                                            const Clock& clock) {
  spdlog::info("{} starting", VersionLine("settled", config.build));
  auto opened = Parts::Open(config, clock);
  if (!opened) return opened.status();
  std::unique_ptr<Parts> parts = std::move(*opened);
  if (Status s = parts->AttachAlerts(); !s.ok()) return s;
  if (Status s = parts->AttachSpans(); !s.ok()) return s;
  parts->ConnectApi();
  parts->io.Start();
  // From here on, a step that fails leaves threads running: they are stopped before returning.
  if (Status s = parts->StartDriving(); !s.ok()) {
    parts->Shutdown();
    return s;
  }
  if (Status s = parts->StartServing(); !s.ok()) {
    parts->Shutdown();
    return s;
  }
  parts->LogSettings();
  return std::unique_ptr<SettledServer>(new SettledServer(std::move(parts)));
}

Status SettledServer::Parts::AttachAlerts() {
  if (config.alert_webhook.empty()) return Status::Ok();
  WebhookSettings webhook;
  webhook.per_creator_per_minute = config.alerts_per_creator;
  auto created =
      WebhookAlerts::Create(config.alert_webhook, clock, io.executor(), *client, webhook);
  if (!created) return created.status();
  alerts = std::move(*created);
  driver.SetAlerts(alerts.get());
  coordinator.SetAlerts(alerts.get());
  bulk.SetAlerts(alerts.get());
  return Status::Ok();
}

Status SettledServer::Parts::AttachSpans() {
  if (config.otlp_traces_url.empty()) return Status::Ok();
  telemetry::OtlpSettings otlp;
  otlp.max_queued = config.otlp_queue;
  otlp.headers = config.otlp_headers;
  otlp.resource.service_name = config.otlp_service_name;
  otlp.resource.service_version = std::string(config.build.version);
  otlp.resource.instance_id = config.lease.instance_id;
  auto exporter =
      telemetry::OtlpExporter::Create(config.otlp_traces_url, clock, io.executor(), *client, otlp);
  if (!exporter) return exporter.status();
  spans = std::move(*exporter);
  driver.SetSpans(spans.get());
  coordinator.SetSpans(spans.get());
  spdlog::info("exporting spans to {} (OTLP/HTTP, JSON) as service.name={}, at most {} queued",
               config.otlp_traces_url, config.otlp_service_name, config.otlp_queue);
  return Status::Ok();
}

void SettledServer::Parts::ConnectApi() {
  api.SetClock([this] { return ReadClock(); });
  api.SetRateLimiter(&rate_limiter);
  api.SetBulkJobs(&bulk);
}

Status SettledServer::Parts::StartDriving() {
  // What each caller holds, for the quotas (--quota-unfinished): counted before any request.
  if (Status s = coordinator.CountHoldings(); !s.ok()) return s;
  if (lease != nullptr) {
    // Shared store: this instance drives what it owns or may claim, found by the lease's poll.
    if (Status s = lease->Start(
            [this](const std::string& gid, TimePoint due) { scheduler.ScheduleFound(gid, due); });
        !s.ok()) {
      return s;
    }
    spdlog::info("instance {} holds its lease ({} ms, renewed every {} ms)",
                 config.lease.instance_id, config.lease.lease.count(), config.lease.poll.count());
  } else {
    auto resumed = coordinator.Resume();
    if (!resumed) return resumed.status();
    if (*resumed > 0) spdlog::info("resuming {} unfinished transactions", *resumed);
  }
  scheduler.Start();
  // Bulk jobs a stop interrupted go on from their cursors (with several instances, each
  // resumes them, and each step is taken by one).
  if (auto jobs = bulk.ResumeAll(); !jobs) {
    spdlog::error("resuming bulk jobs: {}", jobs.status().ToString());
  } else if (*jobs > 0) {
    spdlog::info("resuming {} bulk jobs", *jobs);
  }
  if (host_tracking != nullptr) host_follow.Start();  // not with leases
  repair_sweeps.Start();
  refusal_summaries.Start();
  commit_checks.Start();
  gate_ticks.Start();
  retention.Start();
  return Status::Ok();
}

Status SettledServer::Parts::StartServing() {
  auto bound = api.Start(config.host, config.port);
  if (!bound) return bound.status();
  port = *bound;
  if (!config.grpc.enabled) return Status::Ok();
  grpc_api::GrpcServerOptions options{
      .host = config.host,
      .port = config.grpc.port,
      .max_message_bytes = config.api.max_body_bytes,
      .max_connections = config.grpc.max_connections,
      .max_connections_per_peer = config.grpc.max_connections_per_peer,
      .first_message_timeout = config.grpc.first_message_timeout,
      .idle_timeout = config.api.keep_alive_timeout,
      .memory_limit_bytes = config.grpc.memory_limit_bytes,
      .tls = config.api.tls,
      .tokens = config.api.tokens,
      .client_certificates = config.api.client_certificates,
      .refusals = &refusals,
      .rate_limiter = &rate_limiter};
  auto grpc_server = grpc_api::GrpcServer::Start(coordinator, io.context(), std::move(options));
  if (!grpc_server) return grpc_server.status();
  grpc = std::move(*grpc_server);
  grpc_seen.store(grpc.get());
  // gRPC ends a failed handshake itself and only logs it (grpc_log.h): counted and limited
  // as the HTTPS port's are.
  ObserveGrpcHandshakeFailures([this](std::string_view reason) {
    refusals.HandshakeFailed(api::ApiPort::kGrpc, "", reason);
  });
  spdlog::info("settled gRPC API (dtmgimp.Dtm) listening on {}:{}", config.host, grpc->port());
  return Status::Ok();
}

void SettledServer::Parts::LogSettings() {
  spdlog::info("serving on {} I/O threads; the API over {}", io.size(),
               config.api.tls.enabled() ? "HTTPS" : "HTTP");
  if (config.api.tls.enabled()) {
    spdlog::info("TLS on: certificate {}", config.api.tls.cert_file);
  } else {
    spdlog::warn("TLS off: the API, its tokens included, travels in clear text (--tls-cert)");
  }
  if (config.signing_key) {
    spdlog::info("signing branch calls with {} key {} (--signing-key {})",
                 signing::AlgorithmName(config.signing_key->algorithm()),
                 config.signing_key->keyid(), config.signing_key_file);
  } else {
    spdlog::info(
        "not signing branch calls: participants cannot tell them from anyone's "
        "(--signing-key)");
  }
  if (!config.api.tls.client_ca_file.empty()) {
    spdlog::info("client certificates from {} {}; {} subjects mapped (--client-certificates)",
                 config.api.tls.client_ca_file,
                 config.api.tls.require_client_certificate ? "required" : "asked for",
                 config.api.client_certificates.size());
  }
  if (config.api.tokens.enabled() || config.api.client_certificates.enabled()) {
    spdlog::info("authentication on: {} bearer tokens, {} client certificate subjects",
                 config.api.tokens.size(), config.api.client_certificates.size());
  } else {
    spdlog::warn("authentication off: every request has admin access (--admin-token)");
  }
}

SettledServer::SettledServer(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

SettledServer::~SettledServer() { Shutdown(); }

int SettledServer::port() const { return parts_->port; }
int SettledServer::grpc_port() const { return parts_->grpc == nullptr ? 0 : parts_->grpc->port(); }
drive::Coordinator& SettledServer::coordinator() { return parts_->coordinator; }
storage::Store& SettledServer::store() { return *parts_->store; }

void SettledServer::Shutdown() { parts_->Shutdown(); }

}  // namespace settle::app
