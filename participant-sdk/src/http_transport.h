#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/common/status.h"
#include "settle/sdk/client.h"

namespace httplib {
class Client;
}  // namespace httplib

namespace settle::sdk {

// One HTTP exchange as the transport sends it.
struct HttpRequest {
  std::string method = "GET";  // "GET" or "POST"
  std::string host;            // as ParseHttpUrl gives it ("::1" without brackets)
  int port = 80;
  std::string target;  // path and query, already encoded: sent verbatim
  std::vector<std::pair<std::string, std::string>> headers;  // validated by the caller
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds io_timeout{10'000};  // sending, and each read of the answer
  // Whether the request may be sent a second time when a kept-alive connection turns out to
  // have been closed by the peer (it may have been received the first time).
  bool idempotent = true;
};

// The SDK's HTTP client: keep-alive httplib clients pooled per host:port, TCP_NODELAY.
//
// A pooled client is lent to exactly one call at a time, so no connection is ever used by two
// threads at once. A transport error on a reused connection (the peer closed it while it was
// idle) is retried once on a new connection for idempotent requests; a timeout never is, since
// the peer did receive the request and is merely slow.
//
// Thread-safe: Send may be called concurrently. The mutex guards only the idle lists.
class HttpTransport {
 public:
  explicit HttpTransport(std::size_t max_idle_per_host = 16);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // The answer, whatever its status; Unavailable naming the cause (refused, timed out,
  // closed) when no complete answer came.
  Result<Client::HttpAnswer> Send(const HttpRequest& request);

 private:
  using HostPort = std::pair<std::string, int>;
  struct Lease {
    std::unique_ptr<httplib::Client> client;
    bool reused = false;  // it holds a connection opened by an earlier call
  };

  Lease Acquire(const HostPort& key);
  void Release(const HostPort& key, std::unique_ptr<httplib::Client> client);

  const std::size_t max_idle_per_host_;
  std::mutex mu_;
  std::map<HostPort, std::vector<std::unique_ptr<httplib::Client>>> idle_;
};

// "host:port", with brackets around an IPv6 address.
std::string HostPortText(const std::string& host, int port);

// "HTTP 500: <start of body>" on one line, whatever the body holds: for error messages.
std::string DescribeAnswer(int status, std::string_view body);

}  // namespace settle::sdk
