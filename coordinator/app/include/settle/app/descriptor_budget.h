#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "settle/app/server_config.h"
#include "settle/core/status.h"

namespace settle::app {

// One port's cap on client connections, as the budget sees it.
struct ConnectionCap {
  std::string flag;  // the flag that sets it: "--max-connections"
  std::size_t value = 0;
  bool given = false;  // set by the operator: never lowered, refused if it does not fit
};

// How settled's file descriptors are shared: client connections of the HTTP and gRPC ports
// each within their cap, and a reserve for everything else (the store's files or connections,
// outgoing branch calls and webhook alerts, logs, listening sockets, the runtime's own).
struct DescriptorBudget {
  std::size_t limit = 0;    // descriptors the process may open (RLIMIT_NOFILE's soft limit)
  std::size_t reserve = 0;  // kept for everything but client connections
  std::size_t http = 0;     // the caps that fit
  std::size_t grpc = 0;
  // One line per cap lowered to fit, for the startup log: which, from what, to what, why.
  std::vector<std::string> lowered;
};

// The descriptors kept for everything but client connections: a quarter of `limit`, and at
// least kMinDescriptorReserve (so that a full HTTP port never makes the store, a branch call
// or the log fail to open a file).
inline constexpr std::size_t kMinDescriptorReserve = 64;
std::size_t DescriptorReserve(std::size_t limit);

// Fits the two ports' caps in `limit` less its reserve. Caps that fit are kept. Otherwise the
// caps not given are lowered, sharing what the given ones leave in proportion to their
// values (each at least 1), and `lowered` says so; InvalidArgument naming the flags, their
// values and the limit when the given caps alone do not fit (or nothing is left for a cap not
// given). A port that is off has a cap of 0.
Result<DescriptorBudget> FitConnections(std::size_t limit, const ConnectionCap& http,
                                        const ConnectionCap& grpc);

// Raises this process's soft RLIMIT_NOFILE to its hard limit and returns the soft limit in
// force afterwards (unchanged when raising fails; a very large number for "unlimited").
std::size_t RaiseDescriptorLimit();

// The gRPC port's cap as `config` sets it: --grpc-max-connections while the port is served,
// 0 when it is off.
ConnectionCap GrpcConnectionCap(const ServerConfig& config);

// At settled's start: raises the descriptor limit, fits config.api.max_connections with
// `grpc` into it (FitConnections, logging each cap lowered; a lowered gRPC cap is written to
// config.grpc.max_connections, and its per-peer cap kept at most that), and lowers a default
// --max-connections-per-peer to a quarter of the fitted cap when it was above it, so that
// one host still cannot fill the port. InvalidArgument (exit code 2) when a given cap does
// not fit.
Status ReserveDescriptors(ServerConfig& config, const ConnectionCap& grpc);

}  // namespace settle::app
