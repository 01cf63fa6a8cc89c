#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "forwarding_store.h"
#include "settle/api/api_server.h"
#include "settle/async/asio.h"
#include "settle/calls/branch_caller.h"
#include "settle/core/clock.h"
#include "settle/drive/async_store.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/drive/gid_generator.h"
#include "settle/drive/instance_lease.h"
#include "settle/drive/leased_pass_runner.h"
#include "settle/drive/scheduler.h"
#include "settle/drive/transaction_driver.h"
#include "settle/storage/instance_leases.h"

namespace settle::simulation {

// A commit asked for and not yet applied (SimulationSettings::queued_commits).
struct QueuedCommit {
  storage::WriteBatch batch;
  std::function<void(Status)> done;
};

// Forwards every verb to the database but leaves CommitAsync to Store's default, which calls
// Commit inline: a commit completes on the simulator's thread, inside the handler that asked
// for it (AsyncStore then posts the coroutine's resumption to its executor, where the
// simulator runs it as one more handler). SqliteStore's own CommitAsync would complete on its
// writer thread, racing the simulator.
class InlineStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
};

// Opt-in (SimulationSettings::queued_commits): CommitAsync queues the batch, and the
// simulator applies the oldest one as a step of its own, on its own thread, as the store's
// writer thread applies commits in their order. Between a handler that read and queued its
// commit and that commit, other handlers run and other commits apply: the window of the old
// timeout/registration race.
class QueuedStore final : public InlineStore {
 public:
  QueuedStore(storage::Store& inner, std::deque<QueuedCommit>& queue)
      : InlineStore(inner), queue_(queue) {}
  void CommitAsync(storage::WriteBatch batch, std::function<void(Status)> done) override {
    queue_.push_back({std::move(batch), std::move(done)});
  }

 private:
  std::deque<QueuedCommit>& queue_;
};

struct CallGroup;

// A branch call the driver made that no participant has answered yet. Past its deadline
// (the call's timeout from when it was made) the caller gives up on it.
struct PendingCall {
  engine::BranchCall call;
  std::shared_ptr<CallGroup> group;
  std::size_t index = 0;
  TimePoint deadline;
};

// The calls of one CallAll: the coroutine resumes once every one has an outcome.
struct CallGroup {
  std::vector<std::optional<engine::BranchOutcome>> outcomes;
  std::size_t left = 0;
  std::function<void(std::vector<engine::BranchOutcome>)> done;
};

// The BranchCaller the driver calls through: CallAll suspends its coroutine and leaves the
// calls pending until the simulator answers them, one at a time. `made` sees each call as it
// is made (the invariants that judge the order of calls).
class SimulatedCaller final : public calls::BranchCaller {
 public:
  SimulatedCaller(std::vector<PendingCall>& pending, const Clock& clock,
                  std::function<void(const engine::BranchCall&)> made)
      : pending_(pending), clock_(clock), made_(std::move(made)) {}

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override;

 private:
  std::vector<PendingCall>& pending_;
  const Clock& clock_;
  std::function<void(const engine::BranchCall&)> made_;
};

// One coordinator process: everything a crash loses (the io_context with its handlers and
// suspended coroutines, the coordinator, driver, scheduler and API, the calls in flight, the
// commits not yet applied). Only the database survives it. The API is never bound to a port:
// the simulated clients' requests go to ApiServer::Handle as coroutines on `context`.
// With leases (several instances on one database), as settled runs on PostgreSQL: passes
// claim their transaction first (LeasedPassRunner) and calls are fenced by the lease
// (FencedBranchCaller); the simulator steps the lease (RunOnce) as time passes.
struct Process {
  std::string name;                  // the instance id with leases; "settled" without
  std::deque<QueuedCommit> commits;  // queued_commits only
  std::unique_ptr<InlineStore> store;
  std::unique_ptr<drive::AsyncStore> async_store;
  asio::io_context context;
  std::vector<PendingCall> pending;
  std::unique_ptr<SimulatedCaller> caller;
  drive::CoordinatorMetrics metrics;
  std::unique_ptr<drive::InstanceLease> lease;        // null without leases
  std::unique_ptr<drive::FencedBranchCaller> fenced;  // null without leases
  std::unique_ptr<drive::TransactionDriver> driver;
  std::unique_ptr<drive::LeasedPassRunner> leased_driver;  // null without leases
  std::unique_ptr<drive::Scheduler> scheduler;
  std::unique_ptr<drive::GidGenerator> gids;
  std::unique_ptr<drive::Coordinator> coordinator;
  std::unique_ptr<api::ApiServer> api;
  int requests_in_flight = 0;

  // Whether anything is still in flight: a pending call, a request, a queued commit.
  bool Busy() const { return !pending.empty() || requests_in_flight > 0 || !commits.empty(); }
};

// Builds a process over `database`, and starts it: Coordinator::Resume, or with `leases` the
// instance lease named `name` (which schedules what the instance may drive).
Result<std::unique_ptr<Process>> StartProcess(std::string name, storage::Store& database,
                                              storage::InstanceLeases* leases, const Clock& clock,
                                              bool queued_commits,
                                              std::function<void(const engine::BranchCall&)> made);

// A crash: the process is abandoned, never destroyed (its destructors would wait for passes
// suspended in calls nobody will answer, or resume coroutines of a process that no longer
// exists), so it is leaked on purpose. A process with nothing in flight shuts down in order.
void EndProcess(std::unique_ptr<Process> process, bool crash);

}  // namespace settle::simulation
