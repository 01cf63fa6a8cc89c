#pragma once

#include <cstddef>
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
#include "settle/net/server.h"

namespace settle::grpc_api {

struct GrpcServerOptions {
  std::string host = "127.0.0.1";
  int port = 36790;  // 0: any free port (GrpcServer::port() says which)
  // A larger request message is refused with RESOURCE_EXHAUSTED before it is read.
  std::size_t max_message_bytes = 1 << 20;
  // What bounds the clients, as --max-connections and --keep-alive-timeout bound the HTTP
  // API's (gRPC 1.51 has no cap on the number of connections itself):
  // a connection with no call for this long is closed (GOAWAY; a client reconnects at will);
  Duration idle_timeout{5000};
  // calls in flight on one connection beyond which the client must wait (HTTP/2's
  // MAX_CONCURRENT_STREAMS);
  int max_calls_per_connection = 256;
  // and the memory all connections' buffers may take together (gRPC's resource quota): past
  // it, gRPC refuses new calls and reclaims rather than grow.
  std::size_t memory_quota_bytes = std::size_t{256} << 20;
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

// DTM's gRPC API (service dtmgimp.Dtm, proto/dtmgimp.proto) in front of the coordinator
// (docs/protocol.md §10): each RPC is translated into the engine's typed request
// (request_translator.h), handed to the same Coordinator operation as over HTTP, and its Status
// mapped in one place (grpc_status.h). Unknown members are named in the "settle-ignored-fields"
// initial metadata, as HTTP's Settle-Ignored-Fields header names them. PrepareWorkflow answers
// UNIMPLEMENTED.
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
  // Stops taking calls and waits up to `grace` for those in flight, then cancels them.
  void Stop(Duration grace);

 private:
  struct Impl;
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::grpc_api
