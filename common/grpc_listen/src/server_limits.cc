#include "settle/grpc_listen/server_limits.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace settle::grpc_listen {
namespace {

int Millis(Duration d) {
  return static_cast<int>(std::clamp<std::int64_t>(d.count(), 1, std::numeric_limits<int>::max()));
}

}  // namespace

std::size_t WaitingStreamBudget(std::size_t memory_quota_bytes) {
  return std::max<std::size_t>(memory_quota_bytes / kWaitingStreamBytes, 1);
}

void ApplyServerLimits(grpc::ServerBuilder& builder, const ServerLimits& limits) {
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<std::size_t>(limits.max_message_bytes, std::numeric_limits<int>::max())));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, Millis(limits.idle_timeout));
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             Millis(limits.handshake_timeout));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             std::max(limits.max_streams_per_connection, 1));
  // A stream's window stays at 64 KiB: what one waiting stream can make the server buffer.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES,
                             static_cast<int>(kStreamWindowBytes));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // A port of gRPC's own (a builder's AddListeningPort) is bound without SO_REUSEPORT, so that
  // a second server on a taken port fails to start instead of sharing its connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  grpc::ResourceQuota quota("settle-grpc-server");
  quota.Resize(limits.memory_quota_bytes);
  builder.SetResourceQuota(quota);
}

}  // namespace settle::grpc_listen
