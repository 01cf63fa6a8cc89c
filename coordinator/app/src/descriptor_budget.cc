#include "settle/app/descriptor_budget.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace settle::app {

net::ConnectionCap GrpcConnectionCap(const ServerConfig& config) {
  return {.flag = "--grpc-max-connections",
          .value = config.grpc.enabled ? config.grpc.max_connections : 0,
          .given = config.grpc_max_connections_given};
}

Status ReserveDescriptors(ServerConfig& config, const net::ConnectionCap& grpc) {
  const std::size_t limit = net::RaiseDescriptorLimit();
  const net::ConnectionCap http{.flag = "--max-connections",
                                .value = config.api.max_connections,
                                .given = config.max_connections_given};
  Result<net::DescriptorBudget> budget = net::FitConnections(limit, http, grpc);
  if (!budget) return budget.status();
  for (const std::string& line : budget->lowered) spdlog::warn("{}", line);
  config.api.max_connections = budget->first;
  if (grpc.value > 0) {
    config.grpc.max_connections = budget->second;
    std::size_t& grpc_per_peer = config.grpc.max_connections_per_peer;
    if (grpc_per_peer > budget->second) {
      spdlog::warn("--grpc-max-connections-per-peer lowered from {} to {}: --grpc-max-connections",
                   grpc_per_peer, budget->second);
      grpc_per_peer = budget->second;
    }
  }
  std::size_t& per_peer = config.api.max_connections_per_peer;
  if (!config.max_connections_per_peer_given && per_peer > budget->first / 4) {
    const std::size_t lowered = std::max<std::size_t>(1, budget->first / 4);
    spdlog::warn(
        "--max-connections-per-peer lowered from {} to {}: a quarter of --max-connections {}, "
        "so that one host cannot fill it",
        per_peer, lowered, budget->first);
    per_peer = lowered;
  }
  spdlog::info(
      "descriptors: limit {}, {} kept for the store, branch calls and logs; HTTP connections "
      "at most {} ({} per peer), gRPC connections at most {}",
      budget->limit, budget->reserve, budget->first, per_peer, budget->second);
  return Status::Ok();
}

}  // namespace settle::app
