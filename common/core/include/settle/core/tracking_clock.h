#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include "settle/core/clock.h"

namespace settle {

// A wall clock that runs on another clock's monotonic reading and follows a reference wall
// clock through readings of it: the database's clock, for instances sharing PostgreSQL; the
// host's own wall clock, for one instance on SQLite. Now() is the base clock's Monotonic()
// plus an offset. The first reading sets the offset at once; later ones move it towards what
// they say at most `max_slew` of the time that passes (1%: 36 s an hour), so a step of the
// reference (an NTP step, an operator setting the clock) never makes Now() jump: a timeout
// keeps its length within that fraction, neither firing early nor freezing, and Now() never
// goes backwards. Until the first reading Now() is the base clock's. A reading within a
// millisecond of the target (the reference's own resolution) leaves it as it is, so that once
// caught up Now() takes no lock.
//
// Lifetime: `base` must outlive it. Thread-safe.
class TrackingClock final : public Clock {
 public:
  explicit TrackingClock(const Clock& base, double max_slew = 0.01);

  TimePoint Now() const override;
  MonoTime Monotonic() const override { return base_.Monotonic(); }

  // A reading `reference` of the reference clock, taken between this clock's monotonic
  // readings `sent` and `received` (one instant: sent == received). Returns how far the
  // reference is from Now() at that instant, the error of the reading aside: what is still to
  // be followed.
  Duration Observe(TimePoint reference, MonoTime sent, MonoTime received);

  // The offset Now() adds to the monotonic reading, and the one the readings ask for.
  MonoTime offset() const;
  std::optional<MonoTime> target() const;

 private:
  // Moves offset_ towards target_ for the time passed up to `mono`. Under mutex_.
  void SlewTo(MonoTime mono) const;

  const Clock& base_;
  const double max_slew_;
  mutable std::mutex mutex_;
  mutable MonoTime offset_{0};      // guarded by mutex_
  std::optional<MonoTime> target_;  // guarded by mutex_
  mutable MonoTime slewed_at_{0};   // guarded by mutex_: the last monotonic reading applied
  mutable MonoTime last_now_{MonoTime::min()};  // guarded by mutex_: Now() never goes back
  // offset_ once it equals target_, for Now() without the lock; kNotCaughtUp otherwise.
  static constexpr MonoTime::rep kNotCaughtUp = INT64_MIN;
  mutable std::atomic<MonoTime::rep> caught_up_{kNotCaughtUp};
};

}  // namespace settle
