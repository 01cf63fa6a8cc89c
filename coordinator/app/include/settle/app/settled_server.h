#pragma once

#include <memory>

#include "settle/app/server_config.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace settle::storage {
class Store;
}

namespace settle::drive {
class Coordinator;
}

namespace settle::app {

// settled, assembled: the store (SQLite or PostgreSQL), the I/O threads, the HTTP client for
// branch calls and alerts, the transaction driver, the scheduler, the coordinator and the API
// server. main() wraps it with signal handling; tests run it in-process.
//
// Lifetime: the clock given to Start must outlive it; coordinator() and store() are valid until
// it is destroyed. Thread-safety: Shutdown (also the destructor's) from one thread that is not
// one of its I/O threads; coordinator() and store() from any.
class SettledServer {
 public:
  // Opens the store, resumes every unfinished transaction and starts serving.
  static Result<std::unique_ptr<SettledServer>> Start(const ServerConfig& config,
                                                      const Clock& clock);
  ~SettledServer();  // Shutdown()

  int port() const;
  // The gRPC API's port; 0 when it is off.
  int grpc_port() const;
  drive::Coordinator& coordinator();
  storage::Store& store();

  // Graceful: refuses new changes (503), lets in-flight branch calls finish within the
  // configured grace (unfinished work stays stored and resumes on the next start), stops the
  // HTTP server, and closes the database cleanly. Idempotent.
  void Shutdown();

  struct Parts;

 private:
  explicit SettledServer(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace settle::app
