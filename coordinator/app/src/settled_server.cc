#include "settle/app/settled_server.h"

#include <spdlog/spdlog.h>
#include <unistd.h>
#include <atomic>

#include "settle/api/api_server.h"
#include "settle/app/commit_health.h"
#include "settle/app/grpc_log.h"
#include "settle/async/io_threads.h"
#include "settle/calls/grpc_branch_caller.h"
#include "settle/calls/host_gated_caller.h"
#include "settle/calls/http_branch_caller.h"
#include "settle/core/periodic_thread.h"
#include "settle/core/tracking_clock.h"
#include "settle/drive/bulk_jobs.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/database_clock.h"
#include "settle/drive/gid_generator.h"
#include "settle/drive/instance_lease.h"
#include "settle/drive/leased_pass_runner.h"
#include "settle/drive/rollback_repair.h"
#include "settle/drive/scheduler.h"
#include "settle/drive/transaction_driver.h"
#include "settle/grpc_api/grpc_server.h"
#include "settle/net/client.h"
#include "settle/net/server.h"
#include "settle/storage/open_store.h"
#include "settle/telemetry/otlp_exporter.h"
#include "settled_metrics.h"

namespace settle::app {
namespace {

std::string DefaultInstanceId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return std::string(host[0] != '\0' ? host : "settled") + "-" + std::to_string(getpid());
}

// What gRPC participants are told (dtm-dtm) reaches this coordinator's gRPC API; empty when
// it is off or on a port chosen at start.
std::string GrpcAddress(const ServerConfig& c) {
  if (!c.grpc.enabled || c.grpc.port == 0) return "";
  return c.host + ":" + std::to_string(c.grpc.port);
}

}  // namespace

// Declared in dependency order: each part only refers to parts above it, and members are
// destroyed bottom-up. The I/O threads come first: they are stopped explicitly once nothing
// runs on them, and their context outlives every socket and timer of the parts below.
struct SettledServer::Parts {
  Parts(const ServerConfig& c, const Clock& clk, storage::OpenedStore s,
        std::unique_ptr<net::Client> http_client)
      : config(c),
        host_clock(clk),
        database_clock(s.leases == nullptr
                           ? nullptr
                           : std::make_unique<drive::DatabaseClock>(clk, c.clock_skew)),
        host_tracking(s.leases != nullptr ? nullptr : std::make_unique<TrackingClock>(clk)),
        clock(database_clock != nullptr ? static_cast<const Clock&>(*database_clock)
                                        : *host_tracking),
        host_follow(kFollowHostEvery, [this] { FollowHostClock(); }),
        io(c.io_threads, "settled-io"),
        // PostgreSQL's reads and claims cross the network: they run here, not on I/O threads.
        blocking(s.leases == nullptr ? nullptr
                                     : std::make_unique<asio::thread_pool>(kBlockingThreads)),
        client(std::move(http_client)),
        store(std::move(s.store)),
        async_store(*store, blocking.get()),
        lease(s.leases == nullptr
                  ? nullptr
                  : std::make_unique<drive::InstanceLease>(*s.leases, clock, c.lease)),
        retention(*store, clock, c.retention),
        http_caller(*client, clock,
                    {.signing_key = c.signing_key, .sign_authority = !c.unsigned_authority}),
        grpc_caller(clock, {.ca_file = c.ca_file,
                            .client_cert_file = c.tls_client_cert,
                            .client_key_file = c.tls_client_key,
                            .coordinator = GrpcAddress(c),
                            .signing_key = c.signing_key,
                            .sign_authority = !c.unsigned_authority}),
        routing_caller(http_caller, grpc_caller),
        // A transaction a host's gate held is driven when the gate wakes it (the scheduler is
        // built below; no gate wakes anything before a call was made).
        gated_caller(routing_caller, clock, c.hosts,
                     [this](const std::vector<std::string>& gids) {
                       const TimePoint now = clock.Now();
                       for (const std::string& gid : gids) scheduler.Schedule(gid, now);
                     }),
        gate_ticks(calls::HostGatedCaller::kTickEvery, [this] { gated_caller.Tick(); }),
        fenced_caller(lease == nullptr ? nullptr
                                       : std::make_unique<drive::FencedBranchCaller>(
                                             gated_caller, *lease, clock)),
        // A pass of a transaction a gate woke makes its rows for that host due now.
        driver(async_store, caller(), clock, engine::RetryPolicy(c.retry), metrics, nullptr,
               &gated_caller),
        leased_driver(lease == nullptr ? nullptr
                                       : std::make_unique<drive::LeasedPassRunner>(
                                             driver, *lease, clock, blocking.get())),
        // A held transaction whose gate still holds it is not read again when its own time
        // comes.
        scheduler(clock, io.executor(), runner(), c.max_passes, &gated_caller),
        gids(clock),
        countersigner(c.signing_key ? std::make_unique<calls::TryCountersigner>(
                                          clock, *c.signing_key, !c.unsigned_authority)
                                    : nullptr),
        coordinator(async_store, scheduler, clock, gids,
                    WithCountersigner(c.coordinator, countersigner.get(), &gated_caller, &pauses),
                    metrics),
        bulk(async_store, coordinator, clock, io.executor(), c.bulk_rate, Duration(1000)),
        repair(*store, scheduler, clock),
        repair_sweeps(kRepairEvery,
                      [this] {
                        if (auto found = repair.Sweep(); !found) {
                          spdlog::warn("looking for undone cancels: {}", found.status().ToString());
                        }
                      }),
        refusals(clock),
        rate_limiter(clock, c.rate_limit),
        refusal_summaries(kRefusalSummariesEvery, [this] { refusals.Flush(); }),
        commit_checks(kCommitChecksEvery,
                      [this] {
                        auto change = commit_health.Observe(store->Stats(), clock.Now());
                        if (!change) return;
                        if (change->failing) {
                          spdlog::error("{}", change->line);
                        } else {
                          spdlog::warn("{}", change->line);
                        }
                      }),
        api(
            coordinator, clock, io.context(), c.api,
            [this](metrics::PrometheusText& out) {
              const grpc_api::GrpcServer* grpc_api = grpc_seen.load();
              WriteSettledMetrics(
                  out, {metrics, *store, scheduler, retention, alerts.get(), config.build,
                        &gated_caller, ReadClock(), &refusals,
                        grpc_api != nullptr ? std::optional(grpc_api->counts()) : std::nullopt,
                        &rate_limiter, spans.get()});
            },
            &gated_caller, &refusals) {
    driver.SetPauseSignals(&pauses);
  }

  static drive::CoordinatorSettings WithCountersigner(drive::CoordinatorSettings settings,
                                                      const calls::TryCountersigner* signer,
                                                      calls::HostGates* gates,
                                                      drive::PauseSignals* pauses) {
    settings.try_countersigner = signer;
    settings.gates = gates;
    settings.pauses = pauses;
    return settings;
  }

  static constexpr std::size_t kBlockingThreads = 4;
  // How often to look for failed transactions an earlier version left with undone cancels.
  static constexpr Duration kRepairEvery{60'000};
  // How often the refusals' log says how many lines a flood's rate limit left out.
  static constexpr Duration kRefusalSummariesEvery{5'000};
  // How often the store's counters are read for its commits starting or ending to fail.
  static constexpr Duration kCommitChecksEvery{1'000};

  ServerConfig config;
  // The clock every part below runs on: the database's, with leases (several instances on
  // PostgreSQL, read at every lease renewal); otherwise the host's wall clock followed through
  // its monotonic one, so that a step of the wall clock neither fires timeouts early nor
  // freezes them (TrackingClock).
  const Clock& host_clock;
  std::unique_ptr<drive::DatabaseClock> database_clock;  // null without leases
  std::unique_ptr<TrackingClock> host_tracking;          // null with leases
  const Clock& clock;
  PeriodicThread host_follow;  // without leases: reads the host's wall clock into host_tracking
  static constexpr Duration kFollowHostEvery{1000};

  // One reading of the host's wall clock for host_tracking; a step is logged once.
  void FollowHostClock() {
    if (host_tracking == nullptr) return;
    const MonoTime at = host_clock.Monotonic();
    const std::optional<MonoTime> before = host_tracking->target();
    host_tracking->Observe(host_clock.Now(), at, at);
    if (!before) return;
    const auto moved = std::chrono::duration_cast<Duration>(*host_tracking->target() - *before);
    if (moved >= Duration(1000) || moved <= Duration(-1000)) {
      spdlog::warn(
          "the system clock was set {} by {} ms; settled's clock follows it at 1% of the "
          "time passing, so timeouts keep their length",
          moved > Duration(0) ? "forward" : "back",
          moved > Duration(0) ? moved.count() : -moved.count());
    }
  }
  // How this instance's clock stands against its reference.
  drive::ClockReading ReadClock() const {
    if (database_clock != nullptr) return database_clock->Reading();
    drive::ClockReading r;
    r.reference = "host";
    r.measured = host_tracking->target().has_value();
    if (r.measured) {
      r.following =
          std::chrono::duration_cast<Duration>(*host_tracking->target() - host_tracking->offset());
    }
    return r;
  }
  // The lease's poll schedules into the scheduler, which goes first.
  ~Parts() {
    if (lease != nullptr) lease->Stop(/*release=*/false);
  }

  // Calls go through the gate of their participant host. With leases (a shared store), they
  // are fenced by the lease first (a call the lease refuses says nothing about its host), and
  // passes run only for transactions this instance owns.
  calls::BranchCaller& caller() {
    return fenced_caller != nullptr ? static_cast<calls::BranchCaller&>(*fenced_caller)
                                    : gated_caller;
  }
  drive::PassRunner& runner() {
    return leased_driver != nullptr ? static_cast<drive::PassRunner&>(*leased_driver) : driver;
  }
  // The steps of SettledServer::Start, in its order. Open makes the HTTP client, checks that
  // the ports are free, opens the store and builds the parts on them (its clock read once).
  static Result<std::unique_ptr<Parts>> Open(const ServerConfig& config, const Clock& clock);
  // The webhook's alerts and the OTLP exporter, when configured: given to what reports to
  // them before the I/O threads start, so before any pass.
  Status AttachAlerts();
  Status AttachSpans();
  // What the API reads of the rest: the clock's reading, the rate limiter, the bulk jobs.
  void ConnectApi();
  // With the I/O threads running: the quotas counted, the unfinished transactions resumed (or
  // the lease taken), the scheduler, the bulk jobs and the periodic threads started. Then the
  // HTTP API and, when on, the gRPC API. Either may fail half-way: Shutdown undoes it.
  Status StartDriving();
  Status StartServing();
  // How this instance serves: threads, TLS, signing, client certificates, authentication.
  void LogSettings();
  // See SettledServer::Shutdown; also undoes a start that failed half-way.
  void Shutdown();
  // How many transactions the next start (or, sharing the store, another instance) resumes.
  void LogLeftToResume() {
    auto counts = store->CountUnfinished();
    if (!counts) {
      spdlog::warn("counting the unfinished transactions: {}", counts.status().ToString());
      return;
    }
    std::size_t left = 0;
    for (const storage::UnfinishedCount& c : *counts) left += c.count;
    spdlog::info("{} unfinished transactions are left to {}", left,
                 lease != nullptr ? "the instances sharing the store, or this one's next start"
                                  : "resume at the next start");
  }

  async::IoThreads io;
  std::unique_ptr<asio::thread_pool> blocking;  // null unless the store is shared
  std::unique_ptr<net::Client> client;          // branch calls and the webhook
  std::unique_ptr<storage::Store> store;
  drive::AsyncStore async_store;
  std::unique_ptr<drive::InstanceLease> lease;     // null unless the store is shared
  std::unique_ptr<WebhookAlerts> alerts;           // null without a webhook; set before any pass
  std::unique_ptr<telemetry::OtlpExporter> spans;  // null without --otlp-endpoint; likewise
  Retention retention;
  drive::CoordinatorMetrics metrics;
  calls::HttpBranchCaller http_caller;
  calls::GrpcBranchCaller grpc_caller;
  calls::SchemeRoutingCaller routing_caller;  // each call to the caller its URL needs
  calls::HostGatedCaller gated_caller;
  PeriodicThread gate_ticks;  // wakes what the gates release by time; runs while serving
  std::unique_ptr<drive::FencedBranchCaller> fenced_caller;  // null without leases
  drive::PauseSignals pauses;  // an operator's pause, told to a pass running for it
  drive::TransactionDriver driver;
  std::unique_ptr<drive::LeasedPassRunner> leased_driver;  // null without leases
  drive::Scheduler scheduler;
  drive::GidGenerator gids;
  // settled's countersignature of registered Trys; null when it does not sign.
  std::unique_ptr<calls::TryCountersigner> countersigner;
  drive::Coordinator coordinator;
  drive::BulkJobs bulk;  // operators' bulk actions, run as stored jobs
  drive::RollbackRepair repair;
  PeriodicThread repair_sweeps;   // at start, then every kRepairEvery
  api::RefusalLog refusals;       // the HTTP and gRPC APIs' 401s and 403s, failed handshakes
  api::RateLimiter rate_limiter;  // --rate-limit, for the HTTP and gRPC APIs together
  PeriodicThread refusal_summaries;
  CommitHealth commit_health;    // on commit_checks' thread only
  PeriodicThread commit_checks;  // tells the log when commits start and stop failing
  api::ApiServer api;
  std::unique_ptr<grpc_api::GrpcServer> grpc;  // null when off
  // grpc for the metrics page, which may be scraped while it is being started or stopped.
  std::atomic<const grpc_api::GrpcServer*> grpc_seen{nullptr};
  int port = 0;
  bool stopped = false;
};

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

Result<std::unique_ptr<SettledServer::Parts>> SettledServer::Parts::Open(const ServerConfig& config,
                                                                         const Clock& clock) {
  auto client = net::Client::Create({.ca_file = config.ca_file,
                                     .client_cert_file = config.tls_client_cert,
                                     .client_key_file = config.tls_client_key,
                                     .clock = &clock});
  if (!client) return client.status();
  // The ports before the database: a port another process holds stops settled before it
  // creates or opens anything (both are bound exclusively, the gRPC one too).
  if (Status s = net::CheckListenable(config.host, config.port); !s.ok()) {
    return Status::Unavailable("--port: " + s.message());
  }
  if (config.grpc.enabled) {
    if (Status s = net::CheckListenable(config.host, config.grpc.port); !s.ok()) {
      return Status::Unavailable("--grpc-port: " + s.message());
    }
  }
  storage::SqliteStoreOptions store_options = config.store;
  store_options.clock = &clock;
  auto store = storage::OpenStore(config.db_path, store_options);
  if (!store) return store.status();
  ServerConfig effective = config;
  if (effective.lease.instance_id.empty()) effective.lease.instance_id = DefaultInstanceId();
  auto parts = std::make_unique<Parts>(effective, clock, std::move(*store), std::move(*client));
  if (parts->database_clock != nullptr) {
    parts->lease->SetDatabaseClock(parts->database_clock.get());
  } else {
    parts->FollowHostClock();  // the first reading, before anything reads the clock
  }
  return parts;
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

void SettledServer::Parts::Shutdown() {
  if (stopped) return;
  stopped = true;
  coordinator.BeginShutdown();
  // Passes stop starting calls; the ones in flight get the grace period to finish.
  gate_ticks.Stop();
  repair_sweeps.Stop();
  refusal_summaries.Stop();
  commit_checks.Stop();
  host_follow.Stop();
  scheduler.Stop(config.shutdown_grace);
  api.Stop();
  // Its calls in flight end with the passes they wait for, on the I/O threads, still running.
  if (grpc != nullptr) grpc->Stop(config.shutdown_grace);
  if (grpc != nullptr) ObserveGrpcHandshakeFailures(nullptr);
  retention.Stop();
  scheduler.WaitForPasses();
  // After the last pass: the other instances may take this one's transactions over at once.
  if (lease != nullptr) lease->Stop(/*release=*/true);
  if (alerts != nullptr) alerts->Stop();
  if (spans != nullptr) spans->Stop();  // the last passes' spans, within its grace
  io.Stop();
  if (blocking != nullptr) blocking->join();
  LogLeftToResume();
  const storage::StoreStats stats = store->Stats();
  const double commits = stats.commits == 0 ? 1.0 : static_cast<double>(stats.commits);
  spdlog::info(
      "stopped; closing the database ({} commits, {:.1f} batches, {:.0f} us and {:.1f} WAL pages "
      "per commit; {} over 10 ms, the longest {:.1f} ms; {} background and {} writer "
      "checkpoints)",
      stats.commits, static_cast<double>(stats.batches) / commits,
      static_cast<double>(stats.commit_micros_total) / commits,
      static_cast<double>(stats.wal_pages_written) / commits, stats.commit_time.CountAbove(10'000),
      static_cast<double>(stats.commit_time.max) / 1000, stats.background_checkpoints,
      stats.writer_checkpoints);
}

}  // namespace settle::app
