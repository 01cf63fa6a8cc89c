// StateEffect: how settle-check --entry tells from two readings of --state how often a request
// was applied.
#include "state_effect.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

namespace settle::checker {
namespace {

std::optional<StateEffect> Effect(const std::string& before, const std::string& after) {
  std::string why;
  return StateEffect::Between(before, after, why);
}

}  // namespace

TEST_CASE("a state effect counts numbers by their difference and arrays by their length",
          "[settle-check]") {
  const auto one = Effect(R"({"orders":3,"shop":"x"})", R"({"orders":4,"shop":"x"})");
  REQUIRE(one);
  CHECK(one->ToString() == R"({"orders":1,"shop":null})");
  CHECK_FALSE(one->none());
  CHECK(*one == *Effect(R"({"orders":10,"shop":"x"})", R"({"orders":11,"shop":"x"})"));
  CHECK_FALSE(*one == *Effect(R"({"orders":4,"shop":"x"})", R"({"orders":6,"shop":"x"})"));

  const auto listed = Effect(R"([{"id":1}])", R"([{"id":1},{"id":2}])");
  REQUIRE(listed);
  CHECK(listed->ToString() == R"({"length":1})");
  CHECK(*listed == *Effect(R"([])", R"([{"id":7}])"));

  CHECK(*Effect(R"({"total":0.1})", R"({"total":0.3})") ==
        *Effect(R"({"total":0.3})", R"({"total":0.5})"));
  CHECK(Effect(R"({"orders":3})", R"({"orders":3})")->none());
}

TEST_CASE("a state effect cannot be read from a state that is not JSON or changes otherwise",
          "[settle-check]") {
  std::string why;
  CHECK_FALSE(StateEffect::Between("3 orders", "4 orders", why));
  CHECK(why == "the state is not JSON");
  CHECK_FALSE(StateEffect::Between(R"({"last":"a"})", R"({"last":"b"})", why));
  CHECK(why == R"($.last changed from "a" to "b")");
  CHECK_FALSE(StateEffect::Between(R"({"a":1})", R"({"a":1,"b":2})", why));
  CHECK(why == "$.b appeared");
}

}  // namespace settle::checker
