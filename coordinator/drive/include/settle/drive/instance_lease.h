#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "settle/core/clock.h"
#include "settle/core/failure_streak.h"
#include "settle/core/periodic_thread.h"
#include "settle/core/status.h"
#include "settle/drive/database_clock.h"
#include "settle/storage/instance_leases.h"

namespace settle::drive {

struct InstanceLeaseSettings {
  std::string instance_id;  // unique among the instances sharing the database
  Duration lease{10000};    // how long the instance's lease lasts after each renewal
  Duration poll{500};       // how often it renews and looks for transactions to drive
  // false: no thread of its own; whoever owns the lease calls RunOnce every `poll` (the
  // deterministic simulation steps it on its single thread).
  bool own_thread = true;
};

// This coordinator instance's side of storage::InstanceLeases, for several instances on one
// database:
// - renews the instance lease every `poll`, and counts it held until `lease` after the moment
//   the last successful renewal was sent, on the clock's monotonic reading (the database's
//   expiry is later; setting the wall clock moves neither);
// - every `poll`, schedules the unfinished transactions due soon that this instance may drive
//   (its own, unowned ones, and those of instances whose lease ran out), through `schedule`;
// - claims a transaction before a pass drives it, remembering what it owns while the lease
//   stays held, so that a pass normally costs no extra write.
// Branch calls are fenced by Remaining(): a call must end before the lease could run out, so
// an instance cut off from the database stops calling before another may take over.
// With a DatabaseClock, every renewal also reads the database's clock for it; while that clock
// says the host's is beyond --max-clock-skew, the instance stands down: it stops renewing its
// lease (the others take its transactions over once it runs out, after the fence has ended its
// calls), claims and polls nothing, and only reads the database's clock, until the clocks
// agree again and it renews as before.
//
// Lifetime: `leases`, `clock` and the DatabaseClock it is given must outlive it; Stop (or the
// destructor) joins its thread. Thread-safety: every method from any thread; Start and Stop
// from one.
class InstanceLease {
 public:
  using ScheduleFn = std::function<void(const std::string& gid, TimePoint due)>;

  InstanceLease(storage::InstanceLeases& leases, const Clock& clock,
                InstanceLeaseSettings settings);
  ~InstanceLease();  // Stop(false)
  InstanceLease(const InstanceLease&) = delete;
  InstanceLease& operator=(const InstanceLease&) = delete;

  // Takes the lease (Unavailable if the database refuses), schedules every transaction this
  // instance may drive, and starts renewing and polling.
  Status Start(ScheduleFn schedule);

  // Renews and polls once, after Start: what the background thread does every `poll`. For
  // tests, which start the lease without its thread (own_thread) or with a poll too long to
  // come round, and step it themselves.
  void RunOnce();

  // The clock every renewal reads the database's into (null: none). Before Start.
  void SetDatabaseClock(DatabaseClock* clock) {
    database_clock_ = clock;
    if (clock != nullptr) clock->SetInstance(settings_.instance_id);
  }

  // Stops renewing; with `release`, ends the lease now so that other instances take this
  // one's transactions over at once (after its last pass has ended).
  void Stop(bool release);

  // true: this instance owns `gid` now (claimed it, or already did while the lease held);
  // false: another live instance does, or this one stands down for its clock's skew. NotFound for
  // an unknown gid; Unavailable when the lease is not held or the database cannot be reached.
  Result<bool> Claim(const std::string& gid);

  // Drops `gid` from what this instance remembers owning (its pass found it finished).
  void Forget(const std::string& gid);

  // Whether this instance still owns `gid` by a claim made under the lease it holds now,
  // without asking the database: false once the lease has lapsed since the claim (another
  // instance may have claimed it meanwhile; a renewal does not give the claim back).
  bool StillOwns(const std::string& gid) const;

  // How long the lease is sure to stay held, counting a safety margin; zero or less: not held.
  Duration Remaining() const;

  const InstanceLeaseSettings& settings() const { return settings_; }

 private:
  Status Renew();
  void Poll(TimePoint due_by, TimePoint unowned_due_by);
  // Whether the database's clock lets this instance claim (always, without a DatabaseClock).
  bool SkewAllowsClaims() const;
  // For a clock beyond the skew allowed: renews nothing, reads the database's clock.
  void StandDown();

  storage::InstanceLeases& leases_;
  const Clock& clock_;
  const InstanceLeaseSettings settings_;
  ScheduleFn schedule_;
  std::atomic<MonoTime::rep> held_until_{0};  // a clock_.Monotonic() reading; 0: not held
  std::atomic<bool> lapsed_{false};           // logged as lapsed, not renewed since
  // Each of the database's reads, logged when it starts failing and when it works again.
  FailureStreak clock_reads_;
  FailureStreak renewals_;
  FailureStreak polls_;
  mutable std::mutex mutex_;
  std::unordered_set<std::string> owned_;   // guarded by mutex_; cleared when the lease lapses
  std::unique_ptr<PeriodicThread> thread_;  // null without own_thread
  bool started_ = false;                    // Start succeeded, Stop not called since
  DatabaseClock* database_clock_ = nullptr;
  std::atomic<bool> stood_down_{false};  // stood down for the clock's skew, not renewed since
};

}  // namespace settle::drive
