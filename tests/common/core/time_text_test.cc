#include "settle/core/time_text.h"

#include <catch2/catch.hpp>

namespace settle {
namespace {

std::int64_t Millis(std::string_view text) {
  Result<TimePoint> t = ParseTimeText(text);
  INFO(std::string(text) + ": " + t.status().ToString());
  REQUIRE(t);
  return ToUnixMillis(*t);
}

TEST_CASE("a time is RFC 3339 or Unix milliseconds", "[common]") {
  // 2026-11-22T10:00:00Z is 1795341600 s after the epoch.
  CHECK(Millis("2026-11-22T10:00:00Z") == 1'795'341'600'000);
  CHECK(Millis("2026-11-22t10:00:00z") == 1'795'341'600'000);
  CHECK(Millis("2026-11-22T10:00:00.123Z") == 1'795'341'600'123);
  CHECK(Millis("2026-11-22T10:00:00.1Z") == 1'795'341'600'100);
  CHECK(Millis("2026-11-22T10:00:00.123999Z") == 1'795'341'600'123);
  CHECK(Millis("2026-11-22T11:30:00+01:30") == 1'795'341'600'000);
  CHECK(Millis("2026-11-22T08:00:00-02:00") == 1'795'341'600'000);
  CHECK(Millis("1970-01-01T00:00:00Z") == 0);
  CHECK(Millis("2024-02-29T00:00:00Z") == 1'709'164'800'000);
  CHECK(Millis("1795341600000") == 1'795'341'600'000);
  CHECK(Millis("0") == 0);
  // The text FormatTime writes reads back.
  const TimePoint t = FromUnixMillis(1'795'341'600'123);
  CHECK(Millis(FormatTime(t)) == 1'795'341'600'123);
}

TEST_CASE("anything else is not a time", "[common]") {
  for (const char* bad : {"",
                          "now",
                          "-1",
                          "1.5",
                          "2026-11-22",
                          "2026-11-22T10:00:00",
                          "2026-11-22 10:00:00Z",
                          "2026-13-01T00:00:00Z",
                          "2026-02-30T00:00:00Z",
                          "2025-02-29T00:00:00Z",
                          "2026-11-22T24:00:00Z",
                          "2026-11-22T10:60:00Z",
                          "2026-11-22T10:00:00.Z",
                          "2026-11-22T10:00:00+1:00",
                          "2026-11-22T10:00:00+01:00x",
                          "1969-12-31T23:59:59Z",
                          "1970-01-01T00:00:00+01:00",
                          "99999999999999999999",
                          "253402300800000",
                          "2026-11-22T10:00:00Z "}) {
    INFO(bad);
    Result<TimePoint> t = ParseTimeText(bad);
    CHECK_FALSE(t);
    if (!t) CHECK(t.status().code() == StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace settle
