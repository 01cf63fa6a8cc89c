#include "client_pool.h"

namespace settle::coordinator {

std::unique_ptr<HttpClientConnection> HttpBranchCaller::ClientPool::Take(const std::string& host,
                                                                         int port) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = idle_.find(HostPort(host, port));
  if (it == idle_.end() || it->second.empty()) return nullptr;
  // Last in, first out: the connection idle for the shortest time is the least likely to
  // have been closed by the participant's keep-alive timeout.
  std::unique_ptr<HttpClientConnection> connection = std::move(it->second.back());
  it->second.pop_back();
  return connection;
}

void HttpBranchCaller::ClientPool::Return(const std::string& host, int port,
                                          std::unique_ptr<HttpClientConnection> connection) {
  if (connection == nullptr || !connection->reusable()) return;  // closed here, unlocked
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& idle = idle_[HostPort(host, port)];
    if (idle.size() < max_idle_per_host_) {
      idle.push_back(std::move(connection));
      return;
    }
  }
  // Too many idle connections already: this one is closed here, after the lock is released,
  // because closing a socket is I/O.
}

}  // namespace settle::coordinator
