#include "simulated_process.h"

#include <utility>

#include "settle/async/await.h"

namespace settle::simulation {

asio::awaitable<std::vector<engine::BranchOutcome>> SimulatedCaller::CallAll(
    std::vector<engine::BranchCall> calls) {
  if (calls.empty()) co_return std::vector<engine::BranchOutcome>{};
  co_return co_await async::AwaitCallback<std::vector<engine::BranchOutcome>>(
      [this, &calls](auto done) {
        auto group = std::make_shared<CallGroup>();
        group->outcomes.resize(calls.size());
        group->left = calls.size();
        group->done = std::move(done);
        const TimePoint now = clock_.Now();
        // Each call is made, then pending: `made_` sees the calls of its own group made before it.
        for (std::size_t i = 0; i < calls.size(); ++i) {
          made_(calls[i]);
          pending_.push_back({calls[i], group, i, now + calls[i].timeout});
        }
      });
}

Result<std::unique_ptr<Process>> StartProcess(std::string name, storage::Store& database,
                                              storage::InstanceLeases* leases, const Clock& clock,
                                              bool queued_commits,
                                              std::function<void(const engine::BranchCall&)> made) {
  auto p = std::make_unique<Process>();
  p->name = std::move(name);
  if (queued_commits) {
    p->store = std::make_unique<QueuedStore>(database, p->commits);
  } else {
    p->store = std::make_unique<InlineStore>(database);
  }
  p->async_store = std::make_unique<drive::AsyncStore>(*p->store);
  p->caller = std::make_unique<SimulatedCaller>(p->pending, clock, std::move(made));
  calls::BranchCaller* caller = p->caller.get();
  if (leases != nullptr) {
    p->lease = std::make_unique<drive::InstanceLease>(
        *leases, clock,
        drive::InstanceLeaseSettings{.instance_id = p->name,
                                     .lease = Duration(10000),
                                     .poll = Duration(1000),
                                     .own_thread = false});
    p->fenced = std::make_unique<drive::FencedBranchCaller>(*caller, *p->lease, clock);
    caller = p->fenced.get();
  }
  p->driver = std::make_unique<drive::TransactionDriver>(
      *p->async_store, *caller, clock,
      engine::RetryPolicy(engine::RetrySettings{Duration(8000), 1000},
                          engine::RetryPolicy::NoJitter()),
      p->metrics);
  drive::PassRunner* runner = p->driver.get();
  if (leases != nullptr) {
    p->leased_driver =
        std::make_unique<drive::LeasedPassRunner>(*p->driver, *p->lease, clock, nullptr);
    runner = p->leased_driver.get();
  }
  p->scheduler = std::make_unique<drive::Scheduler>(clock, p->context.get_executor(), *runner);
  p->gids = std::make_unique<drive::GidGenerator>(clock);
  p->coordinator = std::make_unique<drive::Coordinator>(
      *p->async_store, *p->scheduler, clock, *p->gids, drive::CoordinatorSettings{}, p->metrics);
  p->api =
      std::make_unique<api::ApiServer>(*p->coordinator, clock, p->context, api::ApiServerOptions{});
  if (p->lease != nullptr) {
    drive::Scheduler& scheduler = *p->scheduler;
    if (Status s = p->lease->Start([&scheduler](const std::string& gid, TimePoint due) {
          scheduler.ScheduleFound(gid, due);
        });
        !s.ok()) {
      return s;
    }
  } else if (Result<std::size_t> resumed = p->coordinator->Resume(); !resumed.ok()) {
    return resumed.status();
  }
  return p;
}

void EndProcess(std::unique_ptr<Process> process, bool crash) {
  if (!process) return;
  if (crash || process->Busy()) {
    // The lease stops being renewed (not released): the database lets others claim the
    // instance's transactions once it runs out, as after a kill.
    if (process->lease != nullptr) process->lease->Stop(/*release=*/false);
    process.release();  // deliberately leaked: see the header
    return;
  }
  if (process->lease != nullptr) process->lease->Stop(/*release=*/true);
  process->api.reset();
  process->coordinator.reset();
  process->gids.reset();
  process->scheduler.reset();
  process->leased_driver.reset();
  process->driver.reset();
  process.reset();
}

}  // namespace settle::simulation
