#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "settle/storage/instance_leases.h"

namespace settle::testing {

// The database's side of the leases, in memory: it renews and grants every claim unless the
// test has cut it off. Counts what reached it.
class FakeLeases final : public storage::InstanceLeases {
 public:
  std::atomic<bool> reachable{true};
  std::atomic<int> claims{0};
  std::atomic<int> releases{0};
  // What ListClaimable answers.
  std::vector<storage::DueEntry> claimable;

  Result<TimePoint> Renew(const std::string&, Duration) override {
    if (!reachable) return Status::Unavailable("database unreachable");
    std::lock_guard lock(mu_);
    ++renewals_;
    renewed_.notify_all();
    return database_clock.Now();
  }
  Result<TimePoint> DatabaseNow() override {
    if (!reachable) return Status::Unavailable("database unreachable");
    std::lock_guard lock(mu_);
    ++clock_reads_;
    renewed_.notify_all();
    return database_clock.Now();
  }
  // The database's clock: a test sets it apart from the instance's.
  FakeClock database_clock;
  Status Release(const std::string&) override {
    ++releases;
    return Status::Ok();
  }
  Result<bool> Claim(const std::string&, const std::string&) override {
    if (!reachable) return Status::Unavailable("database unreachable");
    ++claims;
    return true;
  }
  Result<std::vector<storage::DueEntry>> ListClaimable(const std::string&, TimePoint, TimePoint,
                                                       std::size_t) override {
    return claimable;
  }

  bool WaitForRenewals(int n) {
    std::unique_lock lock(mu_);
    return renewed_.wait_for(lock, std::chrono::seconds(10), [&] { return renewals_ >= n; });
  }
  // Waits until DatabaseNow() was asked `n` times (an instance that stood down for its clock).
  bool WaitForClockReads(int n) {
    std::unique_lock lock(mu_);
    return renewed_.wait_for(lock, std::chrono::seconds(10), [&] { return clock_reads_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable renewed_;
  int renewals_ = 0;
  int clock_reads_ = 0;
};

}  // namespace settle::testing
