// Alerts about one creator's transactions are budgeted (app/alert_budget.h): a client whose
// transactions all fail cannot crowd everyone else out of the webhook; the next alert sent for
// it says how many were held back.
#include <catch2/catch.hpp>

#include "settle/app/alert_budget.h"

namespace settle::app {
namespace {

constexpr Duration kMinute{60'000};

TEST_CASE("each creator gets its own alerts per window, and the next one says what was held back",
          "[alerts]") {
  AlertBudget budget(3, kMinute);
  const TimePoint t0 = FromUnixMillis(1'800'000'000'000);
  std::size_t held_back = 99;
  for (int i = 0; i < 3; ++i) {
    CHECK(budget.Admit("shop", t0, held_back));
    CHECK(held_back == 0);
  }
  for (int i = 0; i < 5; ++i) CHECK_FALSE(budget.Admit("shop", t0 + Duration(1000), held_back));
  // Another creator, and nobody's transactions, are not held back by the shop's.
  CHECK(budget.Admit("billing", t0 + Duration(2000), held_back));
  CHECK(budget.Admit("", t0 + Duration(2000), held_back));
  CHECK(held_back == 0);
  // A minute later the shop's next alert goes, saying five were held back; then none again.
  CHECK(budget.Admit("shop", t0 + kMinute, held_back));
  CHECK(held_back == 5);
  CHECK(budget.Admit("shop", t0 + kMinute, held_back));
  CHECK(held_back == 0);
  // A clock that steps back starts a new window rather than holding alerts for ever.
  REQUIRE(budget.Admit("shop", t0 + kMinute, held_back));  // the window's third
  CHECK_FALSE(budget.Admit("shop", t0 + kMinute, held_back));
  CHECK(budget.Admit("shop", t0, held_back));
  CHECK(held_back == 1);
}

TEST_CASE("a budget of 0 holds nothing back", "[alerts]") {
  AlertBudget budget(0, kMinute);
  std::size_t held_back = 0;
  for (int i = 0; i < 1000; ++i) REQUIRE(budget.Admit("shop", TimePoint{}, held_back));
}

}  // namespace
}  // namespace settle::app
