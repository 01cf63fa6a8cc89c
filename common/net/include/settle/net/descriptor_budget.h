#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "settle/core/status.h"

namespace settle::net {

// How a process's file descriptors are shared between its servers' client connections, each
// server within its cap, and a reserve for everything else (its files or database
// connections, outgoing calls, logs, listening sockets, the runtime's own), so that a port
// full of clients never makes the rest fail to open a descriptor (`accept4: Too many open
// files`). settled fits its HTTP and gRPC ports (app/descriptor_budget.h), the SDK's
// Participant and GrpcBranchServer their own port.

// One port's cap on client connections, as the budget sees it.
struct ConnectionCap {
  std::string flag;  // what sets it, as the messages name it: "--max-connections"
  std::size_t value = 0;
  bool given = false;  // set by the operator: never lowered, refused if it does not fit
};

struct DescriptorBudget {
  std::size_t limit = 0;    // descriptors the process may open (RLIMIT_NOFILE's soft limit)
  std::size_t reserve = 0;  // kept for everything but client connections
  std::size_t first = 0;    // the two caps that fit, in FitConnections' order
  std::size_t second = 0;
  // One line per cap lowered to fit, for the log: which, from what, to what, why.
  std::vector<std::string> lowered;
};

// The descriptors kept for everything but client connections: a quarter of `limit`, and at
// least kMinDescriptorReserve.
inline constexpr std::size_t kMinDescriptorReserve = 64;
std::size_t DescriptorReserve(std::size_t limit);

// Fits two ports' caps in `limit` less its reserve (a process with one port: `second` 0).
// Caps that fit are kept. Otherwise the caps not given are lowered, sharing what the given
// ones leave in proportion to their values (each at least 1), and `lowered` says so;
// InvalidArgument naming the flags, their values and the limit when the given caps alone do
// not fit (or nothing is left for a cap not given). A port that is off has a cap of 0.
Result<DescriptorBudget> FitConnections(std::size_t limit, const ConnectionCap& first,
                                        const ConnectionCap& second);

// Raises this process's soft RLIMIT_NOFILE to its hard limit and returns the soft limit in
// force afterwards (unchanged when raising fails; a very large number for "unlimited").
std::size_t RaiseDescriptorLimit();

}  // namespace settle::net
