#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "failing_store.h"
#include "fake_clock.h"
#include "scripted_branch_caller.h"
#include "settle/calls/host_gated_caller.h"
#include "settle/core/span.h"
#include "settle/drive/bulk_jobs.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/gid_generator.h"
#include "settle/drive/scheduler.h"
#include "settle/drive/transaction_driver.h"
#include "settle/storage/sqlite_store.h"
#include "sync_coordinator.h"
#include "temp_dir.h"

namespace settle::testing {

// Keeps every stuck alert the driver raises.
class RecordingAlerts final : public drive::StuckAlerts {
 public:
  void TransactionStuck(const storage::Transaction& tx) override {
    std::lock_guard lock(mutex_);
    raised_.push_back(tx);
  }
  std::vector<storage::Transaction> raised() const {
    std::lock_guard lock(mutex_);
    return raised_;
  }
  void TransactionParked(const storage::Transaction& tx) override {
    std::lock_guard lock(mutex_);
    parked_.push_back(tx);
  }
  std::vector<storage::Transaction> parked() const {
    std::lock_guard lock(mutex_);
    return parked_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<storage::Transaction> raised_;
  std::vector<storage::Transaction> parked_;
};

// Keeps every span the driver and the coordinator export.
class RecordingSpans final : public SpanSink {
 public:
  void Export(Span span) override {
    std::lock_guard lock(mutex_);
    spans_.push_back(std::move(span));
  }
  std::vector<Span> spans() const {
    std::lock_guard lock(mutex_);
    return spans_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Span> spans_;
};

// The coordinator as settled assembles it (real SQLite store, driver, scheduler), with a fake
// clock, scripted participants and an io_context the test thread runs: every call runs until
// nothing is left to do, passes it started included, so tests see results at once and move
// time by hand. Calls go through a gate per host (without jitter) only when `gates` says so
// (circuits or a cap on calls in flight): by default every call reaches the scripted
// participants.
class CoordinatorHarness {
 public:
  explicit CoordinatorHarness(engine::RetrySettings retry = {Duration(60'000), 10},
                              drive::CoordinatorSettings settings = {},
                              engine::HostGateSettings gates = NoGates())
      : retry_(retry), settings_(settings), gate_settings_(gates) {
    Open();
  }

  static engine::HostGateSettings NoGates() {
    engine::HostGateSettings none;
    none.circuit.failures = 0;
    none.max_in_flight = 0;
    return none;
  }
  ~CoordinatorHarness() { Close(); }

  // Drops every in-memory part and opens the same database again, as after kill -9 and a
  // restart, then resumes unfinished transactions.
  void Restart() {
    Close();
    Open();
    REQUIRE(sync_->Resume());
  }

  SyncCoordinator& coordinator() { return *sync_; }
  drive::Coordinator& raw_coordinator() { return *coordinator_; }
  const drive::CoordinatorMetrics& metrics() const { return metrics_; }
  // The stuck alerts the driver raised.
  std::vector<storage::Transaction> alerts() const { return alerts_.raised(); }
  // The transactions the pause-after policy parked, as alerted.
  std::vector<storage::Transaction> parked() const { return alerts_.parked(); }
  drive::Scheduler& scheduler() { return *scheduler_; }
  storage::SqliteStore& store() { return *store_; }
  // The store the coordinator and driver write through; it can be told to fail.
  FailingStore& faulty_store() { return *faulty_; }
  FakeClock& clock() { return clock_; }
  ScriptedBranchCaller& caller() { return caller_; }
  calls::HostGatedCaller& gates() { return *gates_; }
  // The spans of sampled transactions, as exported.
  std::vector<Span> spans() const { return spans_.spans(); }
  // The pauses signalled to passes on this "instance".
  const drive::PauseSignals& pauses() const { return pauses_; }
  // Bulk jobs, run on the same context (a job's walk ends before RunCoroutine returns).
  drive::BulkJobs& jobs() { return *jobs_; }
  // The store as the coordinator sees it (a second BulkJobs, as another instance's).
  drive::AsyncStore& async_store() { return *async_store_; }

  storage::Transaction Load(const std::string& gid) {
    auto tx = store_->Load(gid);
    REQUIRE(tx);
    REQUIRE(tx->has_value());
    return **tx;
  }
  GlobalStatus StatusOf(const std::string& gid) { return Load(gid).global.status; }

  // Moves the clock and runs whatever became due, the gates' wakes included.
  void Advance(Duration d) {
    clock_.Advance(d);
    gates_->Tick();
    scheduler_->RunOnce();
    sync_->Drain();
  }
  // Runs what the scheduler started (RunOnce outside Advance).
  void Drain() { sync_->Drain(); }
  asio::io_context& context() { return context_; }

 private:
  void Open() {
    auto store = storage::SqliteStore::Open(dir_.File("settle.db"));
    REQUIRE(store);
    store_ = std::move(*store);
    faulty_ = std::make_unique<FailingStore>(*store_);
    async_store_ = std::make_unique<drive::AsyncStore>(*faulty_);
    gates_ = std::make_unique<calls::HostGatedCaller>(
        caller_, clock_, gate_settings_,
        [this](const std::vector<std::string>& gids) {
          for (const std::string& gid : gids) scheduler_->Schedule(gid, clock_.Now());
        },
        [] { return 1.0; });
    driver_ = std::make_unique<drive::TransactionDriver>(
        *async_store_, *gates_, clock_,
        engine::RetryPolicy(retry_, engine::RetryPolicy::NoJitter()), metrics_, &alerts_,
        gates_.get());
    driver_->SetPauseSignals(&pauses_);
    driver_->SetSpans(&spans_);
    scheduler_ = std::make_unique<drive::Scheduler>(clock_, context_.get_executor(), *driver_);
    gids_ = std::make_unique<drive::GidGenerator>(clock_);
    // As settled wires it: an operator's Retry now and force stop reach the gates.
    drive::CoordinatorSettings settings = settings_;
    settings.gates = gates_.get();
    settings.pauses = &pauses_;
    coordinator_ = std::make_unique<drive::Coordinator>(*async_store_, *scheduler_, clock_, *gids_,
                                                        settings, metrics_);
    coordinator_->SetSpans(&spans_);
    sync_ = std::make_unique<SyncCoordinator>(context_, *coordinator_);
    jobs_ = std::make_unique<drive::BulkJobs>(*async_store_, *coordinator_, clock_,
                                              context_.get_executor());
  }
  void Close() {
    sync_->Drain();
    jobs_.reset();
    sync_.reset();
    coordinator_.reset();
    gids_.reset();
    scheduler_.reset();
    driver_.reset();
    gates_.reset();
    async_store_.reset();
    faulty_.reset();
    store_.reset();
  }

  TempDir dir_;
  FakeClock clock_;
  ScriptedBranchCaller caller_;
  asio::io_context context_;
  engine::RetrySettings retry_;
  drive::CoordinatorSettings settings_;
  engine::HostGateSettings gate_settings_;
  drive::CoordinatorMetrics metrics_;  // counts survive a Restart(), as in one process
  RecordingAlerts alerts_;
  RecordingSpans spans_;        // survive a Restart(), as an exporter's collector would
  drive::PauseSignals pauses_;  // in memory, as settled's: lost on Restart()
  std::unique_ptr<storage::SqliteStore> store_;
  std::unique_ptr<FailingStore> faulty_;
  std::unique_ptr<drive::AsyncStore> async_store_;
  std::unique_ptr<calls::HostGatedCaller> gates_;  // in memory: lost on Restart()
  std::unique_ptr<drive::TransactionDriver> driver_;
  std::unique_ptr<drive::Scheduler> scheduler_;
  std::unique_ptr<drive::GidGenerator> gids_;
  std::unique_ptr<drive::Coordinator> coordinator_;
  std::unique_ptr<SyncCoordinator> sync_;
  std::unique_ptr<drive::BulkJobs> jobs_;
};

}  // namespace settle::testing
