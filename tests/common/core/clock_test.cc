#include "settle/core/clock.h"

#include <catch2/catch.hpp>

#include "fake_clock.h"

namespace settle {
namespace {

TEST_CASE("times are formatted as RFC 3339 UTC with milliseconds", "[common]") {
  CHECK(FormatTime(FromUnixMillis(0)) == "1970-01-01T00:00:00.000Z");
  CHECK(FormatTime(FromUnixMillis(1'795'000'000'123)) == "2026-11-18T11:06:40.123Z");
}

TEST_CASE("a fake clock moves only when told", "[common]") {
  testing::FakeClock clock(FromUnixMillis(1000));
  CHECK(ToUnixMillis(clock.Now()) == 1000);
  clock.Advance(Duration(250));
  CHECK(ToUnixMillis(clock.Now()) == 1250);
}

TEST_CASE("a fake clock's monotonic reading moves with Advance, not when the wall clock is set",
          "[common]") {
  testing::FakeClock clock(FromUnixMillis(1000));
  const MonoTime start = clock.Monotonic();
  clock.Advance(Duration(250));
  CHECK(clock.Monotonic() - start == Duration(250));
  clock.Set(FromUnixMillis(0));  // the wall clock set back
  CHECK(ToUnixMillis(clock.Now()) == 0);
  CHECK(clock.Monotonic() - start == Duration(250));
}

TEST_CASE("the system clock's monotonic reading never goes back", "[common]") {
  SystemClock clock;
  const MonoTime first = clock.Monotonic();
  CHECK(clock.Monotonic() >= first);
}

}  // namespace
}  // namespace settle
