#include "client_pool.h"

namespace settle::coordinator {

HttpBranchCaller::ClientPool::Lease HttpBranchCaller::ClientPool::Acquire(const std::string& host,
                                                                          int port) {
  std::unique_ptr<httplib::Client> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = idle_.find(HostPort(host, port));
    // Last in, first out: the connection idle for the shortest time is the least likely to
    // have been closed by the participant's keep-alive timeout.
    if (it != idle_.end() && !it->second.empty()) {
      client = std::move(it->second.back());
      it->second.pop_back();
    }
  }
  if (client == nullptr) return Lease{NewClient(host, port), false};
  // A client whose last answer said "Connection: close" has no connection left to go stale.
  const bool connected = client->is_socket_open() != 0;
  return Lease{std::move(client), connected};
}

void HttpBranchCaller::ClientPool::Release(const std::string& host, int port,
                                           std::unique_ptr<httplib::Client> client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& idle = idle_[HostPort(host, port)];
    if (idle.size() < max_idle_per_host_) {
      idle.push_back(std::move(client));
      return;
    }
  }
  // Too many idle clients already: `client` is destroyed here, after the lock is released,
  // because closing its socket is I/O.
}

std::unique_ptr<httplib::Client> HttpBranchCaller::ClientPool::NewClient(const std::string& host,
                                                                         int port) {
  auto client = std::make_unique<httplib::Client>(host, port);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  // The target is built already encoded; httplib's own encoding would rewrite characters such
  // as '+' in a registered query string and change its meaning.
  client->set_url_encode(false);
  return client;
}

}  // namespace settle::coordinator
