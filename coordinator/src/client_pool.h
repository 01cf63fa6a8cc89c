#pragma once

#include <httplib.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "settle/coordinator/http_branch_caller.h"

namespace settle::coordinator {

// Idle HTTP clients, each holding at most one keep-alive connection, per participant
// host:port. Acquire hands a client out exclusively to one call; Release takes it back.
//
// Thread-safety: all methods may be called concurrently. The mutex guards only the idle lists:
// connecting, sending and closing happen outside it, on the thread that holds the client.
class HttpBranchCaller::ClientPool {
 public:
  explicit ClientPool(std::size_t max_idle_per_host) : max_idle_per_host_(max_idle_per_host) {}
  ClientPool(const ClientPool&) = delete;
  ClientPool& operator=(const ClientPool&) = delete;

  struct Lease {
    std::unique_ptr<httplib::Client> client;
    // The client holds an open connection from an earlier call, which the participant may
    // have closed since.
    bool reused = false;
  };

  // The most recently released idle client for host:port, or a new unconnected one.
  Lease Acquire(const std::string& host, int port);

  // Puts a client back for the next call to host:port, or drops it (closing its connection)
  // when the host already has max_idle_per_host idle clients.
  void Release(const std::string& host, int port, std::unique_ptr<httplib::Client> client);

  // A client that has never been pooled: keep-alive, TCP_NODELAY, the target sent verbatim.
  static std::unique_ptr<httplib::Client> NewClient(const std::string& host, int port);

 private:
  using HostPort = std::pair<std::string, int>;

  const std::size_t max_idle_per_host_;
  std::mutex mu_;
  std::map<HostPort, std::vector<std::unique_ptr<httplib::Client>>> idle_;
};

}  // namespace settle::coordinator
