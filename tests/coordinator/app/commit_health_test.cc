// The log hears when the store's commits start failing and when they work again, once each,
// however many fail in between.
#include "settle/app/commit_health.h"

#include <catch2/catch.hpp>

namespace settle::app {
namespace {

storage::StoreStats Stats(std::uint64_t commits, std::uint64_t failed, std::string why = "") {
  storage::StoreStats s;
  s.commits = commits;
  s.failed_commits = failed;
  s.last_commit_failure = std::move(why);
  return s;
}

TimePoint At(int seconds) { return TimePoint(Duration(seconds * 1000LL)); }

TEST_CASE("a streak of failed commits is told when it starts, with its cause, and when it ends",
          "[logging][storage]") {
  CommitHealth health;
  // The first reading is the baseline, failures before it included.
  CHECK_FALSE(health.Observe(Stats(100, 3, "old"), At(0)));
  CHECK_FALSE(health.Observe(Stats(150, 3), At(1)));
  const auto started =
      health.Observe(Stats(151, 5, "Unavailable: sqlite: database or disk is full"), At(2));
  REQUIRE(started);
  CHECK(started->failing);
  CHECK_THAT(started->line, Catch::Contains("the store's commits fail: Unavailable: sqlite: "
                                            "database or disk is full"));
  // More failures, and commits that work among them, are not told again.
  CHECK_FALSE(health.Observe(Stats(151, 40, "again"), At(3)));
  CHECK_FALSE(health.Observe(Stats(152, 41, "again"), At(4)));
  const auto ended = health.Observe(Stats(160, 41), At(9));
  REQUIRE(ended);
  CHECK_FALSE(ended->failing);
  CHECK_THAT(ended->line, Catch::Contains("work again, after 38 failed in 7s"));
  CHECK_FALSE(health.Observe(Stats(170, 41), At(10)));
  // A later streak is told again.
  CHECK(health.Observe(Stats(170, 42, "x"), At(11))->failing);
}

}  // namespace
}  // namespace settle::app
