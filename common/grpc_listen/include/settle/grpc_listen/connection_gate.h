#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "settle/core/status.h"

namespace grpc {
class ServerBuilder;
class ServerCredentials;
}  // namespace grpc

namespace settle::grpc_listen {

struct ConnectionLimits {
  // Open connections beyond which a new one is closed as soon as it is accepted, before any
  // byte of it is read (at least 1). It bounds the descriptors the port can take.
  std::size_t max_connections = 1000;
  // Open connections from one IP address beyond which a new one from it is closed the same
  // way (0: no cap of its own; at most max_connections).
  std::size_t max_connections_per_peer = 0;
};

// What a gate has done since it started listening.
struct ConnectionCounts {
  std::size_t open = 0;                // accepted and not yet closed by gRPC
  std::uint64_t accepted = 0;          // handed to gRPC
  std::uint64_t refused_total = 0;     // closed at once: max_connections were open
  std::uint64_t refused_per_peer = 0;  // closed at once: the peer had its share open
  std::uint64_t accept_failures = 0;   // accept() failed (descriptors exhausted: EMFILE...)
};

// The listening socket of one gRPC server, owned here rather than by gRPC, which (1.51) caps
// neither the connections it accepts nor those of one peer: a thread accepts each connection,
// refuses it by closing it at once when the caps are reached (a client sees the connection
// end: UNAVAILABLE), and otherwise hands it to the server through gRPC's external connection
// acceptor, with the server's credentials, so TLS (and mutual TLS) is served as on a port of
// gRPC's own, with the server's channel arguments (resource quota, streams, timeouts).
//
// A connection counts until gRPC has closed its descriptor. gRPC shuts a socket down before
// closing it; the gate watches each accepted socket for that hang-up (epoll, no descriptor of
// its own), then confirms the close by the descriptor's identity (device and inode: a number
// reused by another socket is another inode). A sweep of every connection each second, and
// before refusing one at a cap (at most every 50 ms), catches any close without a hang-up.
//
// Use: Listen, then AttachTo a builder before BuildAndStart, then Start; Stop before the
// server's Shutdown (no connection is handed to a server that is shutting down).
//
// Thread-safety: counts() from any thread; the rest from one thread.
class ConnectionGate {
 public:
  // Binds host:port (port 0: any free port; a name such as localhost: each of its addresses,
  // on one port) and listens. Unavailable if no address can be bound; InvalidArgument for
  // limits out of range.
  static Result<std::unique_ptr<ConnectionGate>> Listen(const std::string& host, int port,
                                                        ConnectionLimits limits);
  ~ConnectionGate();  // Stop()
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Registers the gate as the source of `builder`'s connections, served with `credentials`.
  // Once, before BuildAndStart; the builder then needs no AddListeningPort.
  void AttachTo(grpc::ServerBuilder& builder, std::shared_ptr<grpc::ServerCredentials> credentials);
  // What is told of each connection refused at a cap: the peer's address and whether its own
  // cap (max_connections_per_peer) refused it. Called on the gate's thread; it must not block.
  using RefusalObserver = std::function<void(const std::string& peer, bool per_peer)>;
  // Before Start.
  void ObserveRefusals(RefusalObserver observer);
  // Starts accepting, once the server is started.
  void Start();
  // Stops accepting and closes the listening sockets (connections already handed over are
  // the server's to end). Idempotent.
  void Stop();

  int port() const;
  const ConnectionLimits& limits() const;
  ConnectionCounts counts() const;

  struct Impl;

 private:
  explicit ConnectionGate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::grpc_listen
