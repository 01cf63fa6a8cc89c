#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <vector>
#include <string>

#include "failing_store.h"
#include "fake_clock.h"
#include "scripted_branch_caller.h"
#include "settle/coordinator/coordinator.h"
#include "settle/coordinator/executor.h"
#include "settle/coordinator/gid_generator.h"
#include "settle/coordinator/scheduler.h"
#include "settle/coordinator/transaction_driver.h"
#include "settle/storage/sqlite_store.h"
#include "temp_dir.h"

namespace settle::testing {

// Keeps every stuck alert the driver raises.
class RecordingAlerts final : public coordinator::StuckAlerts {
 public:
  void TransactionStuck(const storage::Transaction& tx) override {
    std::lock_guard lock(mutex_);
    raised_.push_back(tx);
  }
  std::vector<storage::Transaction> raised() const {
    std::lock_guard lock(mutex_);
    return raised_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<storage::Transaction> raised_;
};

// The coordinator as settled assembles it (real SQLite store, driver, scheduler), with a fake
// clock, scripted participants and an inline executor: every pass runs to its end inside the
// call that dispatched it, so tests see results at once and move time by hand.
class CoordinatorHarness {
 public:
  explicit CoordinatorHarness(coordinator::RetrySettings retry = {Duration(60'000), 10},
                              coordinator::CoordinatorSettings settings = {})
      : retry_(retry), settings_(settings) {
    Open();
  }

  // Drops every in-memory part and opens the same database again, as after kill -9 and a
  // restart, then resumes unfinished transactions.
  void Restart() {
    Close();
    Open();
    REQUIRE(coordinator_->Resume());
  }

  coordinator::Coordinator& coordinator() { return *coordinator_; }
  const coordinator::CoordinatorMetrics& metrics() const { return metrics_; }
  // The stuck alerts the driver raised.
  std::vector<storage::Transaction> alerts() const { return alerts_.raised(); }
  coordinator::Scheduler& scheduler() { return *scheduler_; }
  storage::SqliteStore& store() { return *store_; }
  // The store the coordinator and driver write through; it can be told to fail.
  FailingStore& faulty_store() { return *faulty_; }
  FakeClock& clock() { return clock_; }
  ScriptedBranchCaller& caller() { return caller_; }

  storage::Transaction Load(const std::string& gid) {
    auto tx = store_->Load(gid);
    REQUIRE(tx);
    REQUIRE(tx->has_value());
    return **tx;
  }
  GlobalStatus StatusOf(const std::string& gid) { return Load(gid).global.status; }

  // Moves the clock and runs whatever became due.
  void Advance(Duration d) {
    clock_.Advance(d);
    scheduler_->RunOnce();
  }

 private:
  void Open() {
    auto store = storage::SqliteStore::Open(dir_.File("settle.db"));
    REQUIRE(store);
    store_ = std::move(*store);
    faulty_ = std::make_unique<FailingStore>(*store_);
    driver_ = std::make_unique<coordinator::TransactionDriver>(
        *faulty_, caller_, clock_,
        coordinator::RetryPolicy(retry_, coordinator::RetryPolicy::NoJitter()), metrics_,
        &alerts_);
    scheduler_ = std::make_unique<coordinator::Scheduler>(clock_, executor_, *driver_);
    gids_ = std::make_unique<coordinator::GidGenerator>(clock_);
    coordinator_ = std::make_unique<coordinator::Coordinator>(*faulty_, *scheduler_, clock_, *gids_,
                                                              settings_,
                                                              metrics_);
  }
  void Close() {
    coordinator_.reset();
    gids_.reset();
    scheduler_.reset();
    driver_.reset();
    faulty_.reset();
    store_.reset();
  }

  TempDir dir_;
  FakeClock clock_;
  ScriptedBranchCaller caller_;
  coordinator::InlineExecutor executor_;
  coordinator::RetrySettings retry_;
  coordinator::CoordinatorSettings settings_;
  coordinator::CoordinatorMetrics metrics_;  // counts survive a Restart(), as in one process
  RecordingAlerts alerts_;
  std::unique_ptr<storage::SqliteStore> store_;
  std::unique_ptr<FailingStore> faulty_;
  std::unique_ptr<coordinator::TransactionDriver> driver_;
  std::unique_ptr<coordinator::Scheduler> scheduler_;
  std::unique_ptr<coordinator::GidGenerator> gids_;
  std::unique_ptr<coordinator::Coordinator> coordinator_;
};

}  // namespace settle::testing
