#pragma once

#include <chrono>
#include <string>

namespace settle {

// Wall-clock time at millisecond resolution: what the store persists and /query shows.
using Duration = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

inline std::int64_t ToUnixMillis(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint FromUnixMillis(std::int64_t ms) { return TimePoint(Duration(ms)); }

// RFC 3339 in UTC with milliseconds: "2026-11-22T10:00:00.123Z".
std::string FormatTime(TimePoint t);

// The only source of "now" in Settle. Production code takes a Clock&; tests pass a FakeClock
// (tests/support/fake_clock.h). Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
};

}  // namespace settle
