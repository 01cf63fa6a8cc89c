#include "settle/coordinator/settled_server.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "settle/coordinator/api_server.h"
#include "settled_metrics.h"
#include "settle/coordinator/coordinator.h"
#include "settle/coordinator/executor.h"
#include "settle/coordinator/gid_generator.h"
#include "settle/coordinator/http_branch_caller.h"
#include "settle/coordinator/instance_lease.h"
#include "settle/coordinator/leased_pass_runner.h"
#include "settle/coordinator/scheduler.h"
#include "settle/coordinator/transaction_driver.h"
#include "settle/storage/open_store.h"

namespace settle::coordinator {
namespace {

std::string DefaultInstanceId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return std::string(host[0] != '\0' ? host : "settled") + "-" + std::to_string(getpid());
}

}  // namespace

// Declared in dependency order: each part only refers to parts above it, and members are
// destroyed bottom-up.
struct SettledServer::Parts {
  Parts(const ServerConfig& c, const Clock& clk, storage::OpenedStore s,
        std::unique_ptr<WebhookAlerts> a)
      : config(c),
        clock(clk),
        store(std::move(s.store)),
        lease(s.leases == nullptr ? nullptr
                                  : std::make_unique<InstanceLease>(*s.leases, clock, c.lease)),
        alerts(std::move(a)),
        retention(*store, clock, c.retention),
        executor(c.workers),
        http_caller(executor),
        fenced_caller(lease == nullptr ? nullptr
                                       : std::make_unique<FencedBranchCaller>(http_caller, *lease)),
        driver(*store, caller(), clock, RetryPolicy(c.retry), metrics, alerts.get()),
        leased_driver(lease == nullptr ? nullptr
                                       : std::make_unique<LeasedPassRunner>(driver, *lease, clock)),
        scheduler(clock, executor, runner()),
        gids(clock),
        coordinator(*store, scheduler, clock, gids, c.coordinator, metrics),
        api(coordinator, c.api, [this](PrometheusText& out) {
          WriteSettledMetrics(out, {metrics, *store, scheduler, retention, alerts.get()});
        }) {}

  ServerConfig config;
  const Clock& clock;
  // The lease's poll schedules into the scheduler, which goes first.
  ~Parts() {
    if (lease != nullptr) lease->Stop(/*release=*/false);
  }

  // With leases (a shared store), calls are fenced by the lease and passes run only for
  // transactions this instance owns.
  BranchCaller& caller() {
    return fenced_caller != nullptr ? static_cast<BranchCaller&>(*fenced_caller) : http_caller;
  }
  PassRunner& runner() {
    return leased_driver != nullptr ? static_cast<PassRunner&>(*leased_driver) : driver;
  }

  std::unique_ptr<storage::Store> store;
  std::unique_ptr<InstanceLease> lease;   // null unless the store is shared
  std::unique_ptr<WebhookAlerts> alerts;  // null without a webhook
  Retention retention;
  CoordinatorMetrics metrics;
  ThreadPoolExecutor executor;
  HttpBranchCaller http_caller;
  std::unique_ptr<FencedBranchCaller> fenced_caller;  // null without leases
  TransactionDriver driver;
  std::unique_ptr<LeasedPassRunner> leased_driver;  // null without leases
  Scheduler scheduler;
  GidGenerator gids;
  Coordinator coordinator;
  ApiServer api;
  int port = 0;
  bool stopped = false;
};

Result<std::unique_ptr<SettledServer>> SettledServer::Start(const ServerConfig& config,
                                                            const Clock& clock) {
  std::unique_ptr<WebhookAlerts> alerts;
  if (!config.alert_webhook.empty()) {
    auto started = WebhookAlerts::Start(config.alert_webhook, clock);
    if (!started) return started.status();
    alerts = std::move(*started);
  }
  auto store = storage::OpenStore(config.db_path, config.store);
  if (!store) return store.status();
  ServerConfig effective = config;
  if (effective.lease.instance_id.empty()) effective.lease.instance_id = DefaultInstanceId();
  auto parts = std::make_unique<Parts>(effective, clock, std::move(*store), std::move(alerts));
  if (parts->lease != nullptr) {
    // Shared store: this instance drives what it owns or may claim, found by the lease's poll.
    Scheduler& scheduler = parts->scheduler;
    if (Status s = parts->lease->Start([&scheduler](const std::string& gid, TimePoint due) {
          scheduler.Schedule(gid, due);
        });
        !s.ok()) {
      return s;
    }
    spdlog::info("instance {} holds its lease ({} ms, renewed every {} ms)",
                 effective.lease.instance_id, effective.lease.lease.count(),
                 effective.lease.poll.count());
  } else {
    auto resumed = parts->coordinator.Resume();
    if (!resumed) return resumed.status();
    if (*resumed > 0) spdlog::info("resuming {} unfinished transactions", *resumed);
  }
  parts->scheduler.Start();
  parts->retention.Start();
  auto port = parts->api.Start(config.host, config.port);
  if (!port) return port.status();
  parts->port = *port;
  return std::unique_ptr<SettledServer>(new SettledServer(std::move(parts)));
}

SettledServer::SettledServer(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

SettledServer::~SettledServer() { Shutdown(); }

int SettledServer::port() const { return parts_->port; }
Coordinator& SettledServer::coordinator() { return parts_->coordinator; }
storage::Store& SettledServer::store() { return *parts_->store; }

void SettledServer::Shutdown() {
  if (parts_->stopped) return;
  parts_->stopped = true;
  parts_->coordinator.BeginShutdown();
  // Passes stop starting calls; the ones in flight get the grace period to finish.
  parts_->scheduler.Stop(parts_->config.shutdown_grace);
  parts_->api.Stop();
  parts_->retention.Stop();
  parts_->executor.Join();
  // After the last pass: the other instances may take this one's transactions over at once.
  if (parts_->lease != nullptr) parts_->lease->Stop(/*release=*/true);
  if (parts_->alerts != nullptr) parts_->alerts->Stop();
  const storage::StoreStats stats = parts_->store->Stats();
  const double commits = stats.commits == 0 ? 1.0 : static_cast<double>(stats.commits);
  spdlog::info(
      "stopped; closing the database ({} commits, {:.1f} batches, {:.0f} us and {:.1f} WAL pages "
      "per commit; {} over 10 ms, the longest {:.1f} ms; {} background and {} writer "
      "checkpoints)",
      stats.commits, static_cast<double>(stats.batches) / commits,
      static_cast<double>(stats.commit_micros_total) / commits,
      static_cast<double>(stats.wal_pages_written) / commits,
      stats.commit_time.CountAbove(10'000), static_cast<double>(stats.commit_time.max) / 1000,
      stats.background_checkpoints, stats.writer_checkpoints);
}

}  // namespace settle::coordinator
