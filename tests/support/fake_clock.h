#pragma once

#include <atomic>

#include "settle/core/clock.h"

namespace settle::testing {

// A clock that moves only when a test says so.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = FromUnixMillis(1'800'000'000'000))
      : now_(ToUnixMillis(start)) {}

  TimePoint Now() const override { return FromUnixMillis(now_.load()); }
  void Advance(Duration d) { now_ += d.count(); }
  void Set(TimePoint t) { now_ = ToUnixMillis(t); }

 private:
  std::atomic<std::int64_t> now_;
};

}  // namespace settle::testing
