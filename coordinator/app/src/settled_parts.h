#pragma once

// SettledServer::Parts: every part of a running settled, its members in the order they are
// built and torn down. settled_parts.cc builds and stops them; settled_server.cc starts them
// and answers for SettledServer.
#include <atomic>

#include "settle/api/api_server.h"
#include "settle/app/commit_health.h"
#include "settle/app/settled_server.h"
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
#include "settle/storage/open_store.h"
#include "settle/telemetry/otlp_exporter.h"
#include "settled_metrics.h"

namespace settle::app {

// Declared in dependency order: each part only refers to parts above it, and members are
// destroyed bottom-up. The I/O threads come first: they are stopped explicitly once nothing
// runs on them, and their context outlives every socket and timer of the parts below.
struct SettledServer::Parts {
  Parts(const ServerConfig& c, const Clock& clk, storage::OpenedStore s,
        std::unique_ptr<net::Client> http_client);

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
  void FollowHostClock();
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
  // What the constructor's callbacks do: the transactions a gate released scheduled, a sweep
  // for undone cancels, a look at the store's commits, the metrics page written.
  void ScheduleReleased(const std::vector<std::string>& released);
  void SweepRepairs();
  void CheckCommits();
  void WriteMetrics(metrics::PrometheusText& out);
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
  void LogLeftToResume();

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

}  // namespace settle::app
