#include "settle/core/tracking_clock.h"

#include <catch2/catch.hpp>

#include "fake_clock.h"

namespace settle {
namespace {

using testing::FakeClock;
using namespace std::chrono_literals;

constexpr TimePoint kStart = TimePoint(Duration(1'800'000'000'000));

TEST_CASE("a tracking clock is its base's wall clock until its first reading", "[clock]") {
  FakeClock base(kStart);
  TrackingClock clock(base);
  CHECK(clock.Now() == kStart);
  base.Advance(5s);
  CHECK(clock.Now() == kStart + 5s);
  CHECK(clock.Monotonic() == base.Monotonic());
}

TEST_CASE("the first reading of the reference is taken at once, at the middle of its round trip",
          "[clock]") {
  FakeClock base(kStart);
  TrackingClock clock(base);
  // The database answered 30 s behind this host, read between two monotonic readings 10 ms
  // apart: its answer is taken as of the middle.
  const MonoTime sent = base.Monotonic();
  base.Advance(10ms);
  CHECK(clock.Observe(kStart - 30s + 5ms, sent, base.Monotonic()) == 0ms);

  CHECK(clock.Now() == kStart - 30s + 10ms);
  base.Advance(1s);
  CHECK(clock.Now() == kStart - 30s + 1010ms);
}

TEST_CASE(
    "a step of the reference is followed at 1% of the time passing, so intervals keep their "
    "length and the clock never goes back",
    "[clock]") {
  FakeClock base(kStart);
  TrackingClock clock(base);
  clock.Observe(base.Now(), base.Monotonic(), base.Monotonic());

  // The host's wall clock is set an hour ahead (an NTP step): a 10 s timeout must not fire at
  // once; it fires after 10 s, give or take 1%.
  base.Set(kStart + 1h);
  CHECK(clock.Observe(base.Now(), base.Monotonic(), base.Monotonic()) == 1h);
  const TimePoint before = clock.Now();
  CHECK(before == kStart);
  base.Advance(10s);
  CHECK(clock.Now() - before == 10s + 100ms);

  // Set back two hours: the clock slows by 1% and does not jump back.
  base.Set(base.Now() - 2h);
  const Duration behind = clock.Observe(base.Now(), base.Monotonic(), base.Monotonic());
  CHECK(behind < -59min);
  const TimePoint at = clock.Now();
  base.Advance(10s);
  CHECK(clock.Now() - at == 10s - 100ms);
}

TEST_CASE("a small difference is taken up within the time it allows", "[clock]") {
  FakeClock base(kStart);
  TrackingClock clock(base);
  clock.Observe(kStart, base.Monotonic(), base.Monotonic());
  base.Advance(1s);
  // The reference ran 5 ms faster than the monotonic clock: after 0.5 s at 1%, it is caught up.
  clock.Observe(kStart + 1005ms, base.Monotonic(), base.Monotonic());
  base.Advance(500ms);
  CHECK(clock.Now() == kStart + 1505ms);
  CHECK(clock.offset() == *clock.target());
}

}  // namespace
}  // namespace settle
