#pragma once

#include "settle/app/server_config.h"
#include "settle/core/status.h"
#include "settle/net/descriptor_budget.h"

namespace settle::app {

// How settled shares its file descriptors (net/descriptor_budget.h): client connections of
// the HTTP and gRPC ports each within their cap, and a reserve for everything else (the
// store's files or connections, outgoing branch calls and webhook alerts, logs, listening
// sockets, the runtime's own).

// The gRPC port's cap as `config` sets it: --grpc-max-connections while the port is served,
// 0 when it is off.
net::ConnectionCap GrpcConnectionCap(const ServerConfig& config);

// At settled's start: raises the descriptor limit, fits config.api.max_connections with
// `grpc` into it (net::FitConnections, logging each cap lowered; a lowered gRPC cap is written
// to config.grpc.max_connections, and its per-peer cap kept at most that), and lowers a
// default --max-connections-per-peer to a quarter of the fitted cap when it was above it, so
// that one host still cannot fill the port. InvalidArgument (exit code 2) when a given cap
// does not fit.
Status ReserveDescriptors(ServerConfig& config, const net::ConnectionCap& grpc);

}  // namespace settle::app
