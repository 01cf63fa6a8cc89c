#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "settle/api/access_tokens.h"
#include "settle/api/client_certificates.h"
#include "settle/api/rate_limiter.h"
#include "settle/api/refusal_log.h"
#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/drive/coordinator.h"
#include "settle/grpc_listen/connection_gate.h"
#include "settle/grpc_listen/first_message_watch.h"
#include "settle/net/server.h"

namespace settle::grpc_api {

struct GrpcServerOptions {
  std::string host = "127.0.0.1";
  int port = 36790;  // 0: any free port (GrpcServer::port() says which)
  // A larger request message is refused with RESOURCE_EXHAUSTED before it is read.
  std::size_t max_message_bytes = 1 << 20;
  // What bounds the clients (docs/operations.md, "Hostile clients"; gRPC 1.51 caps neither
  // connections nor a stream's wait for its message itself):
  // open connections beyond which a new one is closed as soon as it is accepted
  // (--grpc-max-connections): the descriptors the port may take, which settled's descriptor
  // budget reads;
  std::size_t max_connections = 1000;
  // open connections from one IP address beyond which a new one from it is closed the same
  // way (0: none of its own; at most max_connections);
  std::size_t max_connections_per_peer = 100;
  // a call whose request message has not wholly arrived this long after its headers is ended
  // with DEADLINE_EXCEEDED and its memory freed (--grpc-first-message-timeout); the TLS
  // handshake and HTTP/2's preface and settings have as long;
  Duration first_message_timeout{10000};
  // a connection with no call for this long is closed (GOAWAY; a client reconnects at will);
  Duration idle_timeout{5000};
  // calls in flight on one connection beyond which the client must wait (HTTP/2's
  // MAX_CONCURRENT_STREAMS);
  int max_calls_per_connection = 100;
  // and the memory all connections' buffers may take together (--grpc-memory-limit): gRPC's
  // resource quota, and the budget of calls waiting for their request message (each may hold
  // a 64 KiB flow-control window of a partial message: grpc_listen::kWaitingStreamBytes);
  // a call beyond it is refused at once with RESOURCE_EXHAUSTED.
  std::size_t memory_limit_bytes = std::size_t{256} << 20;
  // With a certificate and key, the API is served over TLS only (the HTTP API's files); with
  // a client CA, clients are asked for certificates (required with
  // require_client_certificate), as on the HTTP API.
  net::TlsFiles tls;
  // The HTTP API's bearer tokens, read from the "authorization" metadata: "Bearer <token>".
  api::AccessTokens tokens;
  // The HTTP API's map of client certificates' subjects: a call without a token is judged by
  // its verified certificate (api::Authentication's rule).
  api::ClientCertificates client_certificates;
  // Where UNAUTHENTICATED and PERMISSION_DENIED answers are logged and counted (port "grpc");
  // null: nowhere. Must outlive the server. A failed TLS handshake never reaches this code:
  // gRPC's library ends it (and logs it through its own logger) without a hook to report it.
  api::RefusalLog* refusals = nullptr;
  // The HTTP API's limit of requests per caller (one bucket per caller for both ports): a call
  // over it is RESOURCE_EXHAUSTED "quota: ... (--rate-limit)". Null: none. Must outlive the
  // server.
  api::RateLimiter* rate_limiter = nullptr;
};

// What a GrpcServer has refused and cut since it started.
struct GrpcServerCounts {
  grpc_listen::ConnectionCounts connections;  // open, accepted, refused at a cap
  std::size_t waiting_calls = 0;              // calls now waiting for their request message
  std::uint64_t first_message_timeouts = 0;   // calls ended at the first-message deadline
  std::uint64_t waiting_refusals = 0;         // calls refused: the waiting budget was full
};

// DTM's gRPC API (service dtmgimp.Dtm, proto/dtmgimp.proto) in front of the coordinator
// (docs/protocol.md §10): each RPC is translated into the engine's typed request
// (request_translator.h), handed to the same Coordinator operation as over HTTP, and its Status
// mapped in one place (grpc_status.h). A call's token is judged as soon as its headers arrive,
// before its message is read. Unknown members are named in the "settle-ignored-fields"
// initial metadata, as HTTP's Settle-Ignored-Fields header names them. PrepareWorkflow answers
// a DtmProgressesReply (docs/protocol.md §3.16).
//
// gRPC's own threads receive the calls; the coordinator's operation runs as a coroutine on
// `context` (settled's I/O threads), which finishes the call when it ends, so no gRPC thread
// waits on storage or on a pass.
//
// Lifetime: `coordinator` and `context` must outlive it, and `context` must run until Stop has
// returned. Thread-safety: Stop from any one thread.
class GrpcServer {
 public:
  // Binds and starts serving; Unavailable if the address cannot be bound.
  static Result<std::unique_ptr<GrpcServer>> Start(drive::Coordinator& coordinator,
                                                   asio::io_context& context,
                                                   GrpcServerOptions options);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const;
  // Thread-safe.
  GrpcServerCounts counts() const;
  // Stops taking calls and waits up to `grace` for those in flight, then cancels them.
  void Stop(Duration grace);

 private:
  struct Impl;
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::grpc_api
