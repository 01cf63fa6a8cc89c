// How a process shares its file descriptors between two ports' connections and a reserve for
// the rest: defaults lowered to fit, given caps kept or refused (settled's ports, the SDK's
// servers).
#include "settle/net/descriptor_budget.h"

#include <sys/resource.h>

#include <catch2/catch.hpp>

namespace settle::net {
namespace {

using Catch::Matchers::Contains;

ConnectionCap Http(std::size_t value, bool given = false) {
  return {.flag = "--max-connections", .value = value, .given = given};
}
ConnectionCap Grpc(std::size_t value, bool given = false) {
  return {.flag = "--grpc-max-connections", .value = value, .given = given};
}

TEST_CASE("caps that fit the descriptor limit less its reserve are kept", "[descriptors]") {
  const Result<DescriptorBudget> budget = FitConnections(20000, Http(10000), Grpc(1024));
  REQUIRE(budget);
  CHECK(budget->reserve == 5000);  // a quarter of the limit
  CHECK(budget->first == 10000);
  CHECK(budget->second == 1024);
  CHECK(budget->lowered.empty());
  CHECK(DescriptorReserve(100) == kMinDescriptorReserve);  // never less than the minimum
}

TEST_CASE("default caps that do not fit are lowered in proportion, and the startup log says so",
          "[descriptors]") {
  const Result<DescriptorBudget> budget = FitConnections(1024, Http(10000), Grpc(1000));
  REQUIRE(budget);
  CHECK(budget->reserve == 256);
  CHECK(budget->first + budget->second <= 1024 - 256);
  CHECK(budget->first == 10000 * 768 / 11000);
  CHECK(budget->second == 1000 * 768 / 11000);
  REQUIRE(budget->lowered.size() == 2);
  CHECK_THAT(budget->lowered[0], Contains("--max-connections lowered from 10000 to 698") &&
                                     Contains("the descriptor limit 1024"));
  CHECK_THAT(budget->lowered[1], Contains("--grpc-max-connections lowered from 1000 to 69"));
}

TEST_CASE("a given cap is kept and the defaults share what it leaves", "[descriptors]") {
  const Result<DescriptorBudget> budget = FitConnections(4096, Http(2000, true), Grpc(5000));
  REQUIRE(budget);
  CHECK(budget->first == 2000);
  CHECK(budget->second == 4096 - 1024 - 2000);
  REQUIRE(budget->lowered.size() == 1);
  CHECK_THAT(budget->lowered[0], Contains("with --max-connections 2000"));
}

TEST_CASE("given caps that do not fit are refused, naming the flags and the limit",
          "[descriptors]") {
  const Result<DescriptorBudget> alone = FitConnections(1024, Http(5000, true), Grpc(0));
  REQUIRE_FALSE(alone);
  CHECK(alone.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(alone.status().message(), Contains("--max-connections 5000 do not fit") &&
                                           Contains("the descriptor limit 1024") &&
                                           Contains("ulimit -n"));

  const Result<DescriptorBudget> both = FitConnections(1024, Http(500, true), Grpc(500, true));
  REQUIRE_FALSE(both);
  CHECK_THAT(both.status().message(),
             Contains("--max-connections 500 and --grpc-max-connections 500"));

  // A given cap that leaves nothing for the other port's default is refused too.
  const Result<DescriptorBudget> nothing_left = FitConnections(1024, Http(768, true), Grpc(1000));
  REQUIRE_FALSE(nothing_left);
  // A port that is off needs nothing.
  CHECK(FitConnections(1024, Http(768, true), Grpc(0)));
}

TEST_CASE("the soft descriptor limit is raised to the hard one", "[descriptors]") {
  rlimit before{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &before) == 0);
  const std::size_t limit = RaiseDescriptorLimit();
  rlimit after{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &after) == 0);
  CHECK(after.rlim_cur == before.rlim_max);
  if (after.rlim_cur != RLIM_INFINITY) CHECK(limit == after.rlim_cur);
}

}  // namespace
}  // namespace settle::net
