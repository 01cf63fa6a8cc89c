#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "settle/core/clock.h"
#include "settle/core/tracking_clock.h"

namespace settle::drive {

struct ClockSkewSettings {
  // A host clock further than this from the database's is logged (once per change).
  Duration warn{1000};
  // Further than this (--max-clock-skew), the instance stops claiming transactions until it
  // comes back; 0: never stops.
  Duration max{5000};
};

// How this instance's clock stands against its reference: the database's clock (several
// instances on PostgreSQL) or the host's wall clock (SQLite).
struct ClockReading {
  std::string reference;  // "database" or "host"
  bool measured = false;  // a reading of the reference has been taken
  // Reference minus this host's wall clock, at the last reading (positive: the host is behind),
  // and half that reading's round trip, the most it can be off by.
  Duration offset{0};
  Duration error{0};
  // What settled's clock still has to catch up with the reference (a step being followed).
  Duration following{0};
  bool claiming = true;  // false: beyond max_clock_skew, the instance claims nothing
  Duration max_skew{0};
};

// The database's wall clock as this instance knows it, for instances sharing PostgreSQL: every
// time an instance stores, and every time it compares with a stored one, is on it, so clocks
// set apart on the instances' hosts neither abort transactions early nor hold them late. Every
// lease renewal reads the database's clock (InstanceLease) and hands it to Observe(): the
// offset from this host's monotonic clock is taken from the middle of the round trip (its half
// is the error) and followed as TrackingClock does, at once the first time. The offset of the
// host's own wall clock is kept for operators (metric, GET /api/admin/clock): beyond
// `settings.max` the instance stops claiming transactions, saying so in one log line, and says
// so again when it resumes.
//
// Lifetime: `host` must outlive it. Thread-safe.
class DatabaseClock final : public Clock {
 public:
  DatabaseClock(const Clock& host, ClockSkewSettings settings);

  TimePoint Now() const override { return tracking_.Now(); }
  MonoTime Monotonic() const override { return host_.Monotonic(); }

  // The database's clock read as `database_now` between this host's monotonic readings `sent`
  // and `received` (just now).
  void Observe(TimePoint database_now, MonoTime sent, MonoTime received);

  // False once a reading put the host's clock beyond max from the database's.
  bool ClaimsAllowed() const { return claiming_.load(); }
  ClockReading Reading() const;
  const std::string& instance() const { return instance_; }
  void SetInstance(std::string id) { instance_ = std::move(id); }

 private:
  const Clock& host_;
  const ClockSkewSettings settings_;
  TrackingClock tracking_;
  std::string instance_;
  std::atomic<bool> claiming_{true};
  mutable std::mutex mutex_;
  std::optional<Duration> offset_;  // guarded by mutex_
  Duration error_{0};               // guarded by mutex_
  Duration logged_offset_{0};       // guarded by mutex_: the offset the last log line named
};

}  // namespace settle::drive
