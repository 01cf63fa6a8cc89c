// The unknown members the coordinator ignored are logged once a minute each, and a flood of
// distinct names cannot grow what it remembers (ignored_fields_log.h).
#include "settle/drive/ignored_fields_log.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fake_clock.h"

namespace settle::drive {
namespace {

using Fields = std::vector<std::string>;

TEST_CASE("each ignored member is logged once a minute, not once a request", "[fields][log]") {
  testing::FakeClock clock;
  IgnoredFieldsLog log(clock);
  CHECK(log.Note("submit", {"wait_resutl", "retry_limt"}) == Fields{"wait_resutl", "retry_limt"});
  CHECK(log.Note("submit", {"wait_resutl"}).empty());
  CHECK(log.Note("prepare", {"retry_limt", "concurent"}) == Fields{"concurent"});
  clock.Advance(std::chrono::seconds(59));
  CHECK(log.Note("submit", {"wait_resutl"}).empty());
  clock.Advance(std::chrono::seconds(1));
  CHECK(log.Note("submit", {"wait_resutl"}) == Fields{"wait_resutl"});
}

TEST_CASE("a flood of distinct member names is remembered up to a bound", "[fields][log]") {
  testing::FakeClock clock;
  IgnoredFieldsLog log(clock);
  for (std::size_t i = 0; i < IgnoredFieldsLog::kMaxRemembered; ++i) {
    REQUIRE(log.Note("submit", {"f" + std::to_string(i)}).size() == 1);
  }
  // Full of names logged within the minute: a new one is counted, not logged.
  CHECK(log.Note("submit", {"one-too-many"}).empty());
  clock.Advance(IgnoredFieldsLog::kEvery);
  // The old ones are forgotten to make room.
  CHECK(log.Note("submit", {"one-too-many"}) == Fields{"one-too-many"});
  CHECK(log.Note("submit", {"f0"}) == Fields{"f0"});
}

}  // namespace
}  // namespace settle::drive
