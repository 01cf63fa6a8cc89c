#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "settle/common/http_client_connection.h"
#include "settle/coordinator/http_branch_caller.h"

namespace settle::coordinator {

// Idle keep-alive connections per participant host:port. Take hands a connection out
// exclusively to one call; Return takes it back.
//
// Thread-safety: all methods may be called concurrently. The mutex guards only the idle lists:
// connecting, sending and closing happen outside it, on the thread that holds the connection.
class HttpBranchCaller::ClientPool {
 public:
  explicit ClientPool(std::size_t max_idle_per_host) : max_idle_per_host_(max_idle_per_host) {}
  ClientPool(const ClientPool&) = delete;
  ClientPool& operator=(const ClientPool&) = delete;

  // The most recently returned idle connection to host:port, or nullptr if there is none.
  std::unique_ptr<HttpClientConnection> Take(const std::string& host, int port);

  // Keeps a reusable connection for the next call to host:port; closes it instead when it
  // cannot be reused or the host already has max_idle_per_host idle connections.
  void Return(const std::string& host, int port, std::unique_ptr<HttpClientConnection> connection);

 private:
  using HostPort = std::pair<std::string, int>;

  const std::size_t max_idle_per_host_;
  std::mutex mu_;
  std::map<HostPort, std::vector<std::unique_ptr<HttpClientConnection>>> idle_;
};

}  // namespace settle::coordinator
