#pragma once

#include <cstddef>

#include "settle/core/clock.h"

namespace grpc {
class ServerBuilder;
}

namespace settle::grpc_listen {

// What bounds one gRPC server's connections in time and memory, beside ConnectionGate's caps
// and FirstMessageWatch's deadline (docs/operations.md, "Hostile clients").
struct ServerLimits {
  // A request message larger than this is refused with RESOURCE_EXHAUSTED before it is read.
  std::size_t max_message_bytes = std::size_t{1} << 20;
  // A connection with no call for this long is closed (GOAWAY; a client reconnects at will).
  Duration idle_timeout{5000};
  // The TLS handshake and HTTP/2's preface and SETTINGS must be done within this (gRPC's
  // default is 120 s), as a stream's first message must (FirstMessageWatch).
  Duration handshake_timeout{10000};
  // Streams one connection may have open at once (HTTP/2's MAX_CONCURRENT_STREAMS).
  int max_streams_per_connection = 100;
  // gRPC's resource quota: the memory its buffers may take together before it reclaims and
  // shrinks its flow-control windows. A soft bound only (gRPC still grants what it must):
  // the hard bounds are the caps on connections and waiting streams.
  std::size_t memory_quota_bytes = std::size_t{256} << 20;
};

// How many bytes a stream waiting for its first message may hold at most: its flow-control
// window (the partial message it may have sent: ApplyServerLimits sets the window to
// kStreamWindowBytes and turns off its growth by BDP probing) and its state (gRPC's call, its
// arena and metadata: about 24 KiB measured on gRPC 1.51, 32 KiB counted). The budget of
// waiting streams is the memory quota divided by this.
inline constexpr std::size_t kStreamWindowBytes = std::size_t{64} << 10;
inline constexpr std::size_t kWaitingStreamBytes = kStreamWindowBytes + (std::size_t{32} << 10);

// The waiting streams `memory_quota_bytes` can hold (at least 1).
std::size_t WaitingStreamBudget(std::size_t memory_quota_bytes);

// Sets `limits` on `builder` as channel arguments and its resource quota, and turns off
// SO_REUSEPORT on the ports gRPC binds itself (a taken port is refused, not shared).
void ApplyServerLimits(grpc::ServerBuilder& builder, const ServerLimits& limits);

}  // namespace settle::grpc_listen
