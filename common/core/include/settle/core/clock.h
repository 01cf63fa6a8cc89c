#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace settle {

// Wall-clock time at millisecond resolution: what the store persists and /query shows.
using Duration = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

inline std::int64_t ToUnixMillis(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint FromUnixMillis(std::int64_t ms) { return TimePoint(Duration(ms)); }

// RFC 3339 in UTC with milliseconds: "2026-11-22T10:00:00.123Z".
std::string FormatTime(TimePoint t);

// A monotonic reading (Clock::Monotonic): the time since an arbitrary fixed point. It never
// goes back and does not move when the wall clock is set (by an operator, NTP, a resumed VM),
// so it is what intervals are measured with: deadlines, timeouts, how long a lease is held,
// how long a call took. Only the difference between two readings of one Clock means anything;
// it is never stored or shown. It is deliberately not a steady_clock::time_point, so that a
// FakeClock's reading cannot be handed to an OS timer: an Asio timer is given a duration
// (`deadline - clock.Monotonic()`), or reads the real steady clock itself.
using MonoTime = std::chrono::nanoseconds;

// Where Settle reads time, with both readings LevelDB's Env offers: Now(), the wall clock
// (what the store persists and /query shows), and Monotonic(), for intervals. Production code
// takes a Clock&; tests pass a FakeClock (tests/support/fake_clock.h), which moves only when
// told, and can set its wall clock without moving its monotonic one. Implementations must be
// thread-safe.
// One exception reads std::chrono::steady_clock itself: the HTTP client's socket deadlines
// (common/net/src/client.cc), which are OS timers (Beast's stream expiry) and must be set and
// compared on the clock those timers run on. Nothing else in Settle reads a std clock but
// SystemClock below; scripts/check-rooms enforces it.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  virtual MonoTime Monotonic() const = 0;
};

// The system's clocks: std::chrono::system_clock and std::chrono::steady_clock.
class SystemClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
  MonoTime Monotonic() const override {
    return std::chrono::duration_cast<MonoTime>(
        std::chrono::steady_clock::now().time_since_epoch());
  }
};

}  // namespace settle
