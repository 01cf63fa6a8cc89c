#include "settle/engine/retry_policy.h"

#include <catch2/catch.hpp>

namespace settle::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

RetryPolicy Policy(double jitter = 1.0, Duration cap = seconds(60), int stuck_after = 10) {
  return RetryPolicy(RetrySettings{cap, stuck_after}, [jitter] { return jitter; });
}

TEST_CASE("the first retry waits retry_interval and each further failure doubles it", "[retry]") {
  const RetryPolicy p = Policy();
  CHECK(p.Delay(seconds(1), 1) == seconds(1));
  CHECK(p.Delay(seconds(1), 2) == seconds(2));
  CHECK(p.Delay(seconds(1), 3) == seconds(4));
  CHECK(p.Delay(seconds(1), 6) == seconds(32));
}

TEST_CASE("the backoff never exceeds the server-wide cap", "[retry]") {
  const RetryPolicy p = Policy(1.0, seconds(60));
  CHECK(p.Delay(seconds(1), 7) == seconds(60));
  CHECK(p.Delay(seconds(1), 1000) == seconds(60));
  CHECK(p.Delay(seconds(1), 1'000'000'000) == seconds(60));
  CHECK(p.Delay(seconds(90), 1) == seconds(60));
}

TEST_CASE("jitter moves a delay by up to 20 percent but never above the cap", "[retry]") {
  CHECK(Policy(0.8).Delay(seconds(10), 1) == seconds(8));
  CHECK(Policy(1.2).Delay(seconds(10), 1) == seconds(12));
  CHECK(Policy(1.2, seconds(60)).Delay(seconds(1), 20) == seconds(60));
  CHECK(Policy(0.8, seconds(60)).Delay(seconds(1), 20) == seconds(48));
}

TEST_CASE("the random jitter stays within 0.8 and 1.2", "[retry]") {
  const RetryPolicy p(RetrySettings{seconds(60), 10});
  for (int i = 0; i < 1000; ++i) {
    const Duration d = p.Delay(seconds(10), 1);
    REQUIRE(d >= seconds(8));
    REQUIRE(d <= seconds(12));
  }
}

TEST_CASE("a branch is stuck once it has failed stuck_after times in a row", "[retry]") {
  const RetryPolicy p = Policy(1.0, seconds(60), 3);
  CHECK_FALSE(p.IsStuck(2));
  CHECK(p.IsStuck(3));
  CHECK(p.IsStuck(4));
}

}  // namespace
}  // namespace settle::engine
