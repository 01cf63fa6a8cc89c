#include "fault_proxy_plan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

namespace settle::testing::fault_proxy {
namespace {

// The faults the plan picks for `count` requests to `path`; nullopt: forwarded untouched.
std::vector<std::optional<Fault>> Decisions(FaultPlan& plan, const std::string& path, int count) {
  std::vector<std::optional<Fault>> out;
  for (int i = 0; i < count; ++i) {
    std::optional<Action> action = plan.Decide(path);
    out.push_back(action ? std::optional<Fault>(action->fault) : std::nullopt);
  }
  return out;
}

constexpr std::optional<Fault> kNone = std::nullopt;

TEST_CASE("a plan without rules or random faults faults nothing", "[fault_proxy]") {
  FaultPlan plan;
  CHECK(Decisions(plan, "/a", 3) == std::vector{kNone, kNone, kNone});
}

TEST_CASE("rules queue up: a later rule counts only the requests earlier rules let through",
          "[fault_proxy]") {
  FaultPlan plan;
  plan.AddRule({.path = "/a", .fault = Fault::kDropResponse, .times = 2});
  plan.AddRule({.path = "/a", .fault = Fault::kHold, .times = 1});
  plan.AddRule({.path = "/b", .fault = Fault::kRespond, .skip = 1, .times = -1});

  CHECK(Decisions(plan, "/a", 4) == std::vector<std::optional<Fault>>{Fault::kDropResponse,
                                                                      Fault::kDropResponse,
                                                                      Fault::kHold, kNone});
  CHECK(Decisions(plan, "/b", 3) ==
        std::vector<std::optional<Fault>>{kNone, Fault::kRespond, Fault::kRespond});
}

TEST_CASE("a rule carries its delay, status and body into the action", "[fault_proxy]") {
  FaultPlan plan;
  plan.AddRule({.path = "/a",
                .fault = Fault::kRespond,
                .delay = std::chrono::milliseconds(7),
                .status = 425,
                .body = "ONGOING"});
  std::optional<Action> action = plan.Decide("/a");
  REQUIRE(action);
  CHECK(action->delay == std::chrono::milliseconds(7));
  CHECK(action->status == 425);
  CHECK(action->body == "ONGOING");
}

TEST_CASE("ClearRules forgets rules and what they counted", "[fault_proxy]") {
  FaultPlan plan;
  plan.AddRule({.path = "/a", .fault = Fault::kDropRequest, .skip = 1});
  CHECK(plan.Decide("/a") == std::nullopt);
  plan.ClearRules();
  CHECK(plan.Decide("/a") == std::nullopt);
  plan.AddRule({.path = "/a", .fault = Fault::kDropRequest, .skip = 1});
  CHECK(Decisions(plan, "/a", 2) == std::vector<std::optional<Fault>>{kNone, Fault::kDropRequest});
}

TEST_CASE("random faults repeat for a seed, restart with SetRandomFaults, and vary by seed",
          "[fault_proxy]") {
  RandomFaults faults{.probability = 0.5,
                      .seed = 7,
                      .faults = {Fault::kDropRequest, Fault::kDelay, Fault::kRespond}};
  FaultPlan plan;
  plan.SetRandomFaults(faults);
  std::vector<std::optional<Fault>> first = Decisions(plan, "/a", 200);
  plan.SetRandomFaults(faults);
  std::vector<std::optional<Fault>> again = Decisions(plan, "/a", 200);
  faults.seed = 8;
  plan.SetRandomFaults(faults);
  std::vector<std::optional<Fault>> other = Decisions(plan, "/a", 200);

  CHECK(first == again);
  CHECK(first != other);
  auto count = [&first](std::optional<Fault> fault) {
    return std::count(first.begin(), first.end(), fault);
  };
  // Half of 200 draws, give or take a lot: the point is that all kinds and misses occur.
  CHECK(count(kNone) > 50);
  CHECK(count(kNone) < 150);
  CHECK(count(Fault::kDropRequest) > 10);
  CHECK(count(Fault::kDelay) > 10);
  CHECK(count(Fault::kRespond) > 10);
}

TEST_CASE("a random kHold becomes a kDelay of RandomFaults::delay", "[fault_proxy]") {
  FaultPlan plan;
  plan.SetRandomFaults(
      {.probability = 1.0, .faults = {Fault::kHold}, .delay = std::chrono::milliseconds(3)});
  std::optional<Action> action = plan.Decide("/a");
  REQUIRE(action);
  CHECK(action->fault == Fault::kDelay);
  CHECK(action->delay == std::chrono::milliseconds(3));
}

TEST_CASE(
    "a random kRespond answers RandomFaults::status with a body the coordinator "
    "classifies by status alone",
    "[fault_proxy]") {
  FaultPlan plan;
  plan.SetRandomFaults({.probability = 1.0, .faults = {Fault::kRespond}, .status = 500});
  std::optional<Action> action = plan.Decide("/a");
  REQUIRE(action);
  CHECK(action->status == 500);
  CHECK(action->body.find("FAILURE") == std::string::npos);
  CHECK(action->body.find("ONGOING") == std::string::npos);
}

}  // namespace
}  // namespace settle::testing::fault_proxy
