#pragma once

#include <atomic>

#include "settle/core/clock.h"

namespace settle::testing {

// A clock that moves only when a test says so. Advance() moves the wall clock and the
// monotonic reading together, as time passing does; Set() moves the wall clock alone, as an
// operator or NTP setting it does (forwards or backwards), and the monotonic reading stays.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = FromUnixMillis(1'800'000'000'000))
      : now_(ToUnixMillis(start)) {}

  TimePoint Now() const override { return FromUnixMillis(now_.load()); }
  MonoTime Monotonic() const override { return MonoTime(monotonic_.load()); }
  void Advance(Duration d) {
    monotonic_ += MonoTime(d).count();
    now_ += d.count();
  }
  void Set(TimePoint t) { now_ = ToUnixMillis(t); }

 private:
  std::atomic<std::int64_t> now_;
  // Starts well away from zero, like a machine's uptime: a reading is never mistaken for "unset".
  std::atomic<std::int64_t> monotonic_{MonoTime(std::chrono::hours(1)).count()};
};

}  // namespace settle::testing
