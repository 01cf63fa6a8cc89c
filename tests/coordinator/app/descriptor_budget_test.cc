// How settled fits its HTTP and gRPC ports' connections in its file descriptors at start
// (net/descriptor_budget.h fits them).
#include "settle/app/descriptor_budget.h"

#include <catch2/catch.hpp>

#include "settle/app/command_line.h"

namespace settle::app {
namespace {

using Catch::Matchers::Contains;

net::ConnectionCap Grpc(std::size_t value, bool given = false) {
  return {.flag = "--grpc-max-connections", .value = value, .given = given};
}

TEST_CASE(
    "settled's start lowers a default per-peer cap with a lowered --max-connections, and "
    "keeps given ones that fit",
    "[descriptors]") {
  const std::size_t limit = net::RaiseDescriptorLimit();
  ServerConfig defaults;
  defaults.api.max_connections = 1'000'000;  // a default far beyond any test host's limit
  REQUIRE(ReserveDescriptors(defaults, Grpc(0)).ok());
  CHECK(defaults.api.max_connections <= limit - net::DescriptorReserve(limit));
  CHECK(defaults.api.max_connections_per_peer <= defaults.api.max_connections / 4 + 1);

  ServerConfig given;
  given.api.max_connections = 100;
  given.max_connections_given = true;
  given.api.max_connections_per_peer = 100;
  given.max_connections_per_peer_given = true;
  REQUIRE(ReserveDescriptors(given, Grpc(0)).ok());
  CHECK(given.api.max_connections == 100);
  CHECK(given.api.max_connections_per_peer == 100);

  ServerConfig too_many;
  too_many.api.max_connections = 1'000'000;
  too_many.max_connections_given = true;
  if (limit < 1'000'000) {
    const Status refused = ReserveDescriptors(too_many, Grpc(0));
    CHECK_THAT(refused.message(), Contains("--max-connections 1000000 do not fit"));
  }
}

TEST_CASE(
    "settled reads --request-timeout and --max-connections-per-peer, and says they were given",
    "[descriptors][cli]") {
  std::vector<const char*> args = {"settled", "--request-timeout", "2s",
                                   "--max-connections-per-peer", "7"};
  const CommandLine cl = ParseCommandLine(static_cast<int>(args.size()), args.data());
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.api.request_timeout == std::chrono::seconds(2));
  CHECK(cl.config.api.max_connections_per_peer == 7);
  CHECK(cl.config.max_connections_per_peer_given);
  CHECK_FALSE(cl.config.max_connections_given);

  const char* defaults_args[] = {"settled"};
  const CommandLine defaults = ParseCommandLine(1, defaults_args);
  CHECK(defaults.config.api.request_timeout == std::chrono::seconds(10));
  CHECK(defaults.config.api.max_connections_per_peer == 512);

  const char* zero[] = {"settled", "--request-timeout", "0"};
  const CommandLine refused = ParseCommandLine(3, zero);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Contains("--request-timeout"));
}

}  // namespace
}  // namespace settle::app
