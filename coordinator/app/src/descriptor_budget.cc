#include "settle/app/descriptor_budget.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <limits>

namespace settle::app {
namespace {

std::string Describe(const ConnectionCap& cap) {
  return cap.flag + " " + std::to_string(cap.value);
}

}  // namespace

std::size_t DescriptorReserve(std::size_t limit) {
  return std::max(kMinDescriptorReserve, limit / 4);
}

Result<DescriptorBudget> FitConnections(std::size_t limit, const ConnectionCap& http,
                                        const ConnectionCap& grpc) {
  DescriptorBudget budget{
      .limit = limit, .reserve = DescriptorReserve(limit), .http = http.value, .grpc = grpc.value};
  const std::size_t room = limit > budget.reserve ? limit - budget.reserve : 0;
  const std::string why = "the descriptor limit " + std::to_string(limit) +
                          " (RLIMIT_NOFILE, raised to its hard limit) less " +
                          std::to_string(budget.reserve) +
                          " kept for the store, branch calls and logs leaves " +
                          std::to_string(room) + " for client connections";
  if (http.value + grpc.value <= room) return budget;

  std::size_t given = 0;
  std::string given_flags;
  std::size_t open = 0;  // the caps that may be lowered, summed
  for (const ConnectionCap* cap : {&http, &grpc}) {
    if (cap->value == 0) continue;
    if (cap->given) {
      given += cap->value;
      given_flags += (given_flags.empty() ? "" : " and ") + Describe(*cap);
    } else {
      open += cap->value;
    }
  }
  const std::size_t left = given <= room ? room - given : 0;
  const std::size_t needed =
      open == 0 ? 0
                : (http.value > 0 && !http.given ? 1 : 0) + (grpc.value > 0 && !grpc.given ? 1 : 0);
  if (given > room || left < needed) {
    return Status::InvalidArgument(
        (given_flags.empty() ? std::string("the client connections") : given_flags) +
        " do not fit: " + why +
        "; lower them, or raise the limit (ulimit -n, systemd's LimitNOFILE)");
  }
  for (auto [cap, fitted] : {std::pair{&http, &budget.http}, std::pair{&grpc, &budget.grpc}}) {
    if (cap->value == 0 || cap->given) continue;
    *fitted = std::max<std::size_t>(1, cap->value * left / open);
    budget.lowered.push_back(cap->flag + " lowered from " + std::to_string(cap->value) + " to " +
                             std::to_string(*fitted) + ": " + why +
                             (given_flags.empty() ? "" : ", with " + given_flags));
  }
  return budget;
}

std::size_t RaiseDescriptorLimit() {
  rlimit limits{};
  if (getrlimit(RLIMIT_NOFILE, &limits) != 0) return 1024;
  if (limits.rlim_cur < limits.rlim_max) {
    rlimit raised = limits;
    raised.rlim_cur = limits.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limits = raised;
  }
  if (limits.rlim_cur == RLIM_INFINITY ||
      limits.rlim_cur > std::numeric_limits<std::size_t>::max() / 2) {
    return std::numeric_limits<std::size_t>::max() / 2;
  }
  return static_cast<std::size_t>(limits.rlim_cur);
}

ConnectionCap GrpcConnectionCap(const ServerConfig& config) {
  return {.flag = "--grpc-max-connections",
          .value = config.grpc.enabled ? config.grpc.max_connections : 0,
          .given = config.grpc_max_connections_given};
}

Status ReserveDescriptors(ServerConfig& config, const ConnectionCap& grpc) {
  const std::size_t limit = RaiseDescriptorLimit();
  const ConnectionCap http{.flag = "--max-connections",
                           .value = config.api.max_connections,
                           .given = config.max_connections_given};
  Result<DescriptorBudget> budget = FitConnections(limit, http, grpc);
  if (!budget) return budget.status();
  for (const std::string& line : budget->lowered) spdlog::warn("{}", line);
  config.api.max_connections = budget->http;
  if (grpc.value > 0) {
    config.grpc.max_connections = budget->grpc;
    std::size_t& grpc_per_peer = config.grpc.max_connections_per_peer;
    if (grpc_per_peer > budget->grpc) {
      spdlog::warn("--grpc-max-connections-per-peer lowered from {} to {}: --grpc-max-connections",
                   grpc_per_peer, budget->grpc);
      grpc_per_peer = budget->grpc;
    }
  }
  std::size_t& per_peer = config.api.max_connections_per_peer;
  if (!config.max_connections_per_peer_given && per_peer > budget->http / 4) {
    const std::size_t lowered = std::max<std::size_t>(1, budget->http / 4);
    spdlog::warn(
        "--max-connections-per-peer lowered from {} to {}: a quarter of --max-connections {}, "
        "so that one host cannot fill it",
        per_peer, lowered, budget->http);
    per_peer = lowered;
  }
  spdlog::info(
      "descriptors: limit {}, {} kept for the store, branch calls and logs; HTTP connections "
      "at most {} ({} per peer), gRPC connections at most {}",
      budget->limit, budget->reserve, budget->http, per_peer, budget->grpc);
  return Status::Ok();
}

}  // namespace settle::app
