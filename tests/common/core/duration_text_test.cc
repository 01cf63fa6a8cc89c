#include "settle/core/duration_text.h"

#include <catch2/catch.hpp>

namespace settle {
namespace {

TEST_CASE("durations are written with a unit, or as bare seconds", "[common]") {
  CHECK(ParseDuration("250ms")->count() == 250);
  CHECK(ParseDuration("3s")->count() == 3000);
  CHECK(ParseDuration("2m")->count() == 120000);
  CHECK(ParseDuration("1h")->count() == 3600000);
  CHECK(ParseDuration("7d")->count() == 7LL * 24 * 3600 * 1000);
  CHECK(ParseDuration("30")->count() == 30000);
  CHECK(ParseDuration("0s")->count() == 0);
}

TEST_CASE("anything else is not a duration", "[common]") {
  for (const char* bad : {"", "s", "-1s", "1.5s", "3 s", "3sec", "1w", "99999999999d"}) {
    INFO(bad);
    CHECK_FALSE(ParseDuration(bad));
  }
}

TEST_CASE("durations print in their largest exact unit", "[common]") {
  CHECK(FormatDuration(Duration(1500)) == "1500ms");
  CHECK(FormatDuration(Duration(60000)) == "1m");
  CHECK(FormatDuration(Duration(3000)) == "3s");
  CHECK(FormatDuration(Duration(0)) == "0ms");
}

}  // namespace
}  // namespace settle
