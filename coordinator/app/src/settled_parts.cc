// Building settled's parts (SettledServer::Parts, settled_parts.h) on an opened store, what
// their callbacks do, and stopping them again.
#include "settled_parts.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "settle/app/grpc_log.h"
#include "settle/net/server.h"

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

// How the gRPC participants are called: the same CA, client certificate and signing key as
// the HTTP ones.
calls::GrpcBranchCallerOptions GrpcCallerOptions(const ServerConfig& c) {
  return {.ca_file = c.ca_file,
          .client_cert_file = c.tls_client_cert,
          .client_key_file = c.tls_client_key,
          .coordinator = GrpcAddress(c),
          .signing_key = c.signing_key,
          .sign_authority = !c.unsigned_authority};
}

}  // namespace

SettledServer::Parts::Parts(const ServerConfig& c, const Clock& clk, storage::OpenedStore s,
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
      grpc_caller(clock, GrpcCallerOptions(c)),
      routing_caller(http_caller, grpc_caller),
      // A transaction a host's gate held is driven when the gate wakes it (the scheduler is
      // built below; no gate wakes anything before a call was made).
      gated_caller(routing_caller, clock, c.hosts,
                   [this](const std::vector<std::string>& gids) { ScheduleReleased(gids); }),
      gate_ticks(calls::HostGatedCaller::kTickEvery, [this] { gated_caller.Tick(); }),
      fenced_caller(lease == nullptr
                        ? nullptr
                        : std::make_unique<drive::FencedBranchCaller>(gated_caller, *lease, clock)),
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
      countersigner(c.signing_key ? std::make_unique<calls::TryCountersigner>(clock, *c.signing_key,
                                                                              !c.unsigned_authority)
                                  : nullptr),
      coordinator(async_store, scheduler, clock, gids,
                  WithCountersigner(c.coordinator, countersigner.get(), &gated_caller, &pauses),
                  metrics),
      bulk(async_store, coordinator, clock, io.executor(), c.bulk_rate, Duration(1000)),
      repair(*store, scheduler, clock),
      repair_sweeps(kRepairEvery, [this] { SweepRepairs(); }),
      refusals(clock),
      rate_limiter(clock, c.rate_limit),
      refusal_summaries(kRefusalSummariesEvery, [this] { refusals.Flush(); }),
      commit_checks(kCommitChecksEvery, [this] { CheckCommits(); }),
      api(
          coordinator, clock, io.context(), c.api,
          [this](metrics::PrometheusText& out) { WriteMetrics(out); }, &gated_caller, &refusals) {
  driver.SetPauseSignals(&pauses);
}

void SettledServer::Parts::ScheduleReleased(const std::vector<std::string>& released) {
  const TimePoint now = clock.Now();
  for (const std::string& gid : released) scheduler.Schedule(gid, now);
}

void SettledServer::Parts::SweepRepairs() {
  if (auto found = repair.Sweep(); !found) {
    spdlog::warn("looking for undone cancels: {}", found.status().ToString());
  }
}

void SettledServer::Parts::CheckCommits() {
  auto change = commit_health.Observe(store->Stats(), clock.Now());
  if (!change) return;
  if (change->failing) {
    spdlog::error("{}", change->line);
  } else {
    spdlog::warn("{}", change->line);
  }
}

void SettledServer::Parts::WriteMetrics(metrics::PrometheusText& out) {
  const grpc_api::GrpcServer* grpc_api = grpc_seen.load();
  WriteSettledMetrics(out, {metrics, *store, scheduler, retention, alerts.get(), config.build,
                            &gated_caller, ReadClock(), &refusals,
                            grpc_api != nullptr ? std::optional(grpc_api->counts()) : std::nullopt,
                            &rate_limiter, spans.get()});
}

void SettledServer::Parts::FollowHostClock() {
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

void SettledServer::Parts::LogLeftToResume() {
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
