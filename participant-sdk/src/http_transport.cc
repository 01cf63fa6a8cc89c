#include "http_transport.h"

#include <httplib.h>

#include <algorithm>
#include <exception>

namespace settle::sdk {
namespace {

// How much of an answer's body goes into an error message.
constexpr std::size_t kDetailBodyBytes = 200;

std::unique_ptr<httplib::Client> NewClient(const std::string& host, int port) {
  auto client = std::make_unique<httplib::Client>(host, port);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  // Targets arrive encoded already; httplib's own encoding would rewrite characters such as
  // '+' in a caller's query string and change its meaning.
  client->set_url_encode(false);
  return client;
}

struct Exchange {
  httplib::Error error = httplib::Error::Success;
  bool timed_out = false;
  int status = 0;
  std::string body;
};

Exchange SendOnce(httplib::Client& client, const HttpRequest& request) {
  const auto connect_timeout = std::max(request.connect_timeout, std::chrono::milliseconds(1));
  const auto io_timeout = std::max(request.io_timeout, std::chrono::milliseconds(1));
  client.set_connection_timeout(connect_timeout);
  client.set_write_timeout(io_timeout);
  client.set_read_timeout(io_timeout);

  httplib::Request req;
  req.method = request.method;
  req.path = request.target;
  for (const auto& [name, value] : request.headers) req.headers.emplace(name, value);
  req.body = request.body;

  Exchange exchange;
  httplib::Response response;
  // httplib reports a read that timed out and a connection the peer closed both as
  // Error::Read; only the time spent tells them apart. steady_clock measures I/O here, not
  // business time.
  const auto start = std::chrono::steady_clock::now();
  if (client.send(req, response, exchange.error)) {
    exchange.error = httplib::Error::Success;
    exchange.status = response.status;
    exchange.body = std::move(response.body);
    return exchange;
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  exchange.timed_out =
      exchange.error == httplib::Error::ConnectionTimeout ||
      ((exchange.error == httplib::Error::Read || exchange.error == httplib::Error::Write) &&
       elapsed >= io_timeout);
  if (exchange.error == httplib::Error::Success) exchange.error = httplib::Error::Unknown;
  return exchange;
}

Status TransportFailure(const Exchange& exchange, const HttpRequest& request) {
  const std::string where = HostPortText(request.host, request.port);
  if (exchange.timed_out) {
    if (exchange.error == httplib::Error::ConnectionTimeout) {
      return Status::Unavailable("timed out after " +
                                 std::to_string(request.connect_timeout.count()) +
                                 " ms connecting to " + where);
    }
    return Status::Unavailable("timed out after " + std::to_string(request.io_timeout.count()) +
                               " ms waiting for " + where);
  }
  switch (exchange.error) {
    case httplib::Error::Connection:
      return Status::Unavailable("cannot connect to " + where +
                                 " (refused, unreachable or unresolvable)");
    case httplib::Error::Read:
      return Status::Unavailable("connection closed by " + where + " before a complete answer");
    case httplib::Error::Write:
      return Status::Unavailable("connection closed by " + where + " while sending the request");
    default:
      return Status::Unavailable("connection error with " + where + ": " +
                                 httplib::to_string(exchange.error));
  }
}

}  // namespace

std::string HostPortText(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string DescribeAnswer(int status, std::string_view body) {
  std::string detail = "HTTP " + std::to_string(status);
  if (body.empty()) return detail;
  detail += ": ";
  for (unsigned char c : body.substr(0, kDetailBodyBytes)) {
    detail += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
  }
  if (body.size() > kDetailBodyBytes) detail += "...";
  return detail;
}

HttpTransport::HttpTransport(std::size_t max_idle_per_host)
    : max_idle_per_host_(max_idle_per_host) {}

HttpTransport::~HttpTransport() = default;

HttpTransport::Lease HttpTransport::Acquire(const HostPort& key) {
  std::unique_ptr<httplib::Client> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = idle_.find(key);
    // Last in, first out: the connection idle for the shortest time is the least likely to
    // have been closed by the peer's keep-alive timeout.
    if (it != idle_.end() && !it->second.empty()) {
      client = std::move(it->second.back());
      it->second.pop_back();
    }
  }
  if (client == nullptr) return Lease{NewClient(key.first, key.second), false};
  // A client whose last answer said "Connection: close" has no connection left to go stale.
  const bool connected = client->is_socket_open() != 0;
  return Lease{std::move(client), connected};
}

void HttpTransport::Release(const HostPort& key, std::unique_ptr<httplib::Client> client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& idle = idle_[key];
    if (idle.size() < max_idle_per_host_) {
      idle.push_back(std::move(client));
      return;
    }
  }
  // Enough idle clients already: this one is destroyed outside the lock, since closing its
  // socket is I/O.
}

Result<Client::HttpAnswer> HttpTransport::Send(const HttpRequest& request) {
  try {
    const HostPort key(request.host, request.port);
    Lease lease = Acquire(key);
    Exchange exchange = SendOnce(*lease.client, request);
    if (exchange.error != httplib::Error::Success && !exchange.timed_out && lease.reused &&
        request.idempotent) {
      lease.client = NewClient(request.host, request.port);
      exchange = SendOnce(*lease.client, request);
    }
    // A client that failed is dropped with its connection: its state is unknown.
    if (exchange.error != httplib::Error::Success) return TransportFailure(exchange, request);
    Release(key, std::move(lease.client));
    return Client::HttpAnswer{exchange.status, std::move(exchange.body)};
  } catch (const std::exception& e) {
    return Status::Unavailable("HTTP client error talking to " +
                               HostPortText(request.host, request.port) + ": " + e.what());
  } catch (...) {
    return Status::Unavailable("HTTP client error talking to " +
                               HostPortText(request.host, request.port));
  }
}

}  // namespace settle::sdk
