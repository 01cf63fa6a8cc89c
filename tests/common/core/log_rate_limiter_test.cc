#include "settle/core/log_rate_limiter.h"

#include <catch2/catch.hpp>

#include "fake_clock.h"

namespace settle {
namespace {

using testing::FakeClock;
using namespace std::chrono_literals;

constexpr LogRateLimiter::Options kThreePerMinute{.lines = 3, .window = Duration(60'000)};

TEST_CASE(
    "a kind's first lines in its window are logged, the last of them marked, the rest counted",
    "[log_rate_limiter]") {
  FakeClock clock;
  LogRateLimiter limiter(clock, 2, kThreePerMinute);
  for (int i = 1; i <= 3; ++i) {
    const LogRateLimiter::Verdict v = limiter.Admit(0);
    CHECK(v.log);
    CHECK(v.last == (i == 3));
    CHECK(v.suppressed == 0);
  }
  for (int i = 0; i < 1000; ++i) {
    const LogRateLimiter::Verdict v = limiter.Admit(0);
    REQUIRE_FALSE(v.log);
    REQUIRE(v.suppressed == 0);
  }
  // Another kind has a window of its own.
  CHECK(limiter.Admit(1).log);
  // Nothing is reported before the window has ended.
  clock.Advance(59'999ms);
  CHECK(limiter.TakeEnded().empty());
  CHECK_FALSE(limiter.Admit(0).log);
}

TEST_CASE("the next event after the window tells how many were not logged, once",
          "[log_rate_limiter]") {
  FakeClock clock;
  LogRateLimiter limiter(clock, 1, kThreePerMinute);
  for (int i = 0; i < 10; ++i) limiter.Admit(0);  // 3 logged, 7 suppressed
  clock.Advance(60s);
  const LogRateLimiter::Verdict next = limiter.Admit(0);
  CHECK(next.log);
  CHECK(next.suppressed == 7);
  // A new window opened with that event: two more lines, then counting again.
  CHECK(limiter.Admit(0).suppressed == 0);
  CHECK(limiter.Admit(0).last);
  CHECK_FALSE(limiter.Admit(0).log);
  CHECK(limiter.TakeEnded().empty());
  clock.Advance(60s);
  const std::vector<LogRateLimiter::Ended> ended = limiter.TakeEnded();
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].kind == 0);
  CHECK(ended[0].suppressed == 1);
  // Reported by TakeEnded: the next event does not report it again.
  CHECK(limiter.TakeEnded().empty());
  CHECK(limiter.Admit(0).suppressed == 0);
}

TEST_CASE("a window that suppressed nothing reports nothing", "[log_rate_limiter]") {
  FakeClock clock;
  LogRateLimiter limiter(clock, 3, kThreePerMinute);
  limiter.Admit(2);
  limiter.Admit(2);
  clock.Advance(2min);
  CHECK(limiter.TakeEnded().empty());
  const LogRateLimiter::Verdict v = limiter.Admit(2);
  CHECK(v.log);
  CHECK(v.suppressed == 0);
}

TEST_CASE("a flood of any length gives at most lines + 1 lines per window", "[log_rate_limiter]") {
  FakeClock clock;
  LogRateLimiter limiter(clock, 1, kThreePerMinute);
  std::size_t lines = 0;
  // 100,000 events, one every millisecond for 100 s: two windows and the start of a third.
  for (int i = 0; i < 100'000; ++i) {
    const LogRateLimiter::Verdict v = limiter.Admit(0);
    lines += (v.log ? 1 : 0) + (v.suppressed > 0 ? 1 : 0);
    clock.Advance(1ms);
  }
  for (const LogRateLimiter::Ended& e : limiter.TakeEnded()) lines += e.suppressed > 0 ? 1 : 0;
  CHECK(lines <= 2 * (3 + 1));
  CHECK(lines >= 2 * 3);
}

TEST_CASE("at least one line per window is logged, whatever the options say",
          "[log_rate_limiter]") {
  FakeClock clock;
  LogRateLimiter limiter(clock, 1, {.lines = 0, .window = Duration(1000)});
  CHECK(limiter.options().lines == 1);
  const LogRateLimiter::Verdict first = limiter.Admit(0);
  CHECK(first.log);
  CHECK(first.last);
  CHECK_FALSE(limiter.Admit(0).log);
}

}  // namespace
}  // namespace settle
