#include "settle/common/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>

#include "settle/common/http_request_parser.h"

namespace settle {
namespace {

using SteadyClock = std::chrono::steady_clock;

// epoll_event.data.ptr of the two sockets that are not connections.
char listen_tag;
char stop_tag;

std::int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             SteadyClock::now().time_since_epoch())
      .count();
}

std::string ErrorBody(const std::string& message) {
  return nlohmann::json{{"message", message}}.dump();
}

// Sends all of `parts` (head and body) on a non-blocking socket, waiting for room at most
// `timeout` at a time.
bool SendAll(int fd, std::string_view head, std::string_view body, Duration timeout) {
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  int first = 0;
  const int count = body.empty() ? 1 : 2;
  while (first < count) {
    msghdr message{};
    message.msg_iov = parts + first;
    message.msg_iovlen = static_cast<std::size_t>(count - first);
    const ssize_t sent = sendmsg(fd, &message, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
      continue;
    }
    if (sent <= 0) return false;
    auto left = static_cast<std::size_t>(sent);
    while (first < count && left >= parts[first].iov_len) {
      left -= parts[first].iov_len;
      ++first;
    }
    if (first < count) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return true;
}

// Closing a socket with unread bytes makes the kernel reset the connection, which can destroy
// the refusal just sent before the client reads it (a client still sending an oversized
// body). So the server stops sending, then reads and drops what keeps coming, for a bounded
// time and amount, before the caller closes.
void DrainBeforeClose(int fd) {
  shutdown(fd, SHUT_WR);
  constexpr std::size_t kMaxDrainBytes = 16 << 20;
  const auto deadline = SteadyClock::now() + std::chrono::seconds(2);
  std::size_t drained = 0;
  char buffer[16 * 1024];
  while (drained < kMaxDrainBytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - SteadyClock::now());
    if (left.count() <= 0) return;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;
    drained += static_cast<std::size_t>(n);
  }
}

}  // namespace

struct HttpServer::Connection {
  Connection(int fd, std::string address, int port, std::size_t max_body)
      : fd(fd), parser(max_body), remote_address(std::move(address)), remote_port(port) {}

  const int fd;
  HttpRequestParser parser;  // used by the one worker serving the connection
  const std::string remote_address;
  const int remote_port;
  // For the housekeeper: when bytes last came or went, and what the connection is doing.
  std::atomic<std::int64_t> last_activity_ms{NowMillis()};
  std::atomic<bool> busy{false};        // a worker is serving it
  std::atomic<bool> mid_request{false};  // armed with part of a request read
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : options_(options), handler_(std::move(handler)) {}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Start(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (rc != 0) return Status::InvalidArgument("cannot resolve '" + host + "': " + gai_strerror(rc));
  int error = 0;
  for (const addrinfo* a = addresses; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = errno;
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      error = errno;
      close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  freeaddrinfo(addresses);
  if (listen_fd_ < 0) {
    return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                               std::strerror(error));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  const int bound_port = ntohs(bound.ss_family == AF_INET6
                                   ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                   : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0) return Status::Unavailable("cannot create an epoll set");
  epoll_event listen_event{EPOLLIN | EPOLLONESHOT, {.ptr = &listen_tag}};
  // Level-triggered and never consumed: once written, it wakes every worker to leave.
  epoll_event stop_event{EPOLLIN, {.ptr = &stop_tag}};
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event) != 0 ||
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &stop_event) != 0) {
    return Status::Unavailable(std::string("epoll_ctl: ") + std::strerror(errno));
  }
  started_ = true;
  for (std::size_t i = 0; i < std::max<std::size_t>(1, options_.threads); ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
  housekeeper_ = std::thread([this] { HousekeepingLoop(); });
  return bound_port;
}

void HttpServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (started_) {
    const std::uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof(one));
    {
      std::lock_guard lock(housekeeping_mutex_);
    }
    housekeeping_wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    housekeeper_.join();
  }
  std::lock_guard lock(connections_mutex_);
  for (auto& [fd, connection] : connections_) close(fd);
  connections_.clear();
  for (int* fd : {&listen_fd_, &stop_fd_, &epoll_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void HttpServer::WorkerLoop() {
  for (;;) {
    epoll_event event{};
    // One event per wake-up: a worker takes one connection, and the next event wakes the
    // next idle worker.
    const int n = epoll_wait(epoll_fd_, &event, 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || event.data.ptr == &stop_tag) return;
    if (event.data.ptr == &listen_tag) {
      AcceptAll();
      continue;
    }
    Serve(*static_cast<Connection*>(event.data.ptr));
  }
}

void HttpServer::AcceptAll() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t length = sizeof(peer);
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors or memory: the pending connection stays queued and the listening
      // socket stays readable; pause so that re-arming it does not spin a worker.
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      break;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char address[INET6_ADDRSTRLEN] = "";
    int port = 0;
    if (peer.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
      inet_ntop(AF_INET6, &in6->sin6_addr, address, sizeof(address));
      port = ntohs(in6->sin6_port);
    } else {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
      inet_ntop(AF_INET, &in->sin_addr, address, sizeof(address));
      port = ntohs(in->sin_port);
    }
    auto connection = std::make_unique<Connection>(fd, address, port, options_.max_body_bytes);
    epoll_event event{EPOLLIN | EPOLLONESHOT, {.ptr = connection.get()}};
    std::lock_guard lock(connections_mutex_);
    if (connections_.size() >= options_.max_connections) {
      RefuseOverLimit(fd);
      continue;
    }
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      close(fd);
      continue;
    }
    connections_.emplace(fd, std::move(connection));
  }
  epoll_event listen_event{EPOLLIN | EPOLLONESHOT, {.ptr = &listen_tag}};
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &listen_event);
}

void HttpServer::RefuseOverLimit(int fd) {
  // Best effort and without waiting: the socket's buffer is empty, so a short answer fits.
  const std::string body = ErrorBody("too many connections (" +
                                     std::to_string(options_.max_connections) +
                                     " open); try again later");
  const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                             "application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
                             body;
  const ssize_t sent = send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)sent;
  close(fd);
}

void HttpServer::Rearm(Connection& connection) {
  connection.mid_request.store(connection.parser.started(), std::memory_order_relaxed);
  connection.busy.store(false, std::memory_order_release);
  epoll_event event{EPOLLIN | EPOLLONESHOT, {.ptr = &connection}};
  // After this the connection may be served by another worker at once: touch it no more.
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd, &event) != 0) Close(connection);
}

void HttpServer::Close(Connection& connection) {
  // The housekeeper shuts sockets down only under this lock and only for connections in the
  // map, so it never reaches an fd number that close() has freed for another connection.
  std::lock_guard lock(connections_mutex_);
  const int fd = connection.fd;
  close(fd);  // also removes it from the epoll set
  connections_.erase(fd);
}

bool HttpServer::Answer(Connection& connection, const HttpResponse& response, bool close) {
  std::string head;
  head.reserve(128);
  head += "HTTP/1.1 ";
  head += std::to_string(response.status);
  head += ' ';
  head += HttpReasonPhrase(response.status);
  head += "\r\nContent-Type: ";
  head += response.content_type;
  head += "\r\nContent-Length: ";
  head += std::to_string(response.body.size());
  for (const auto& [name, value] : response.headers) {
    head += "\r\n";
    head += name;
    head += ": ";
    head += value;
  }
  head += close ? "\r\nConnection: close\r\n\r\n" : "\r\n\r\n";
  const bool sent = SendAll(connection.fd, head, response.body, options_.io_timeout);
  connection.last_activity_ms.store(NowMillis(), std::memory_order_relaxed);
  return sent;
}

void HttpServer::Serve(Connection& connection) {
  connection.busy.store(true, std::memory_order_relaxed);
  HttpRequestParser& parser = connection.parser;
  char buffer[16 * 1024];
  for (;;) {
    const ssize_t n = recv(connection.fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Rearm(connection);
    if (n <= 0) return Close(connection);  // closed by the client, reset, or shut down
    connection.last_activity_ms.store(NowMillis(), std::memory_order_relaxed);
    std::string_view data(buffer, static_cast<std::size_t>(n));
    while (!data.empty()) {
      std::size_t consumed = 0;
      const HttpRequestParser::State state = parser.Feed(data, consumed);
      data.remove_prefix(consumed);
      if (parser.TakeContinueRequest() &&
          !SendAll(connection.fd, "HTTP/1.1 100 Continue\r\n\r\n", {}, options_.io_timeout)) {
        return Close(connection);
      }
      if (state == HttpRequestParser::State::kNeedMore) break;
      if (state == HttpRequestParser::State::kError) {
        const HttpResponse refusal =
            options_.refusal ? options_.refusal(parser.error_status(), parser.error())
                             : HttpResponse{parser.error_status(), "application/json",
                                            ErrorBody("request: " + parser.error())};
        if (Answer(connection, refusal, /*close=*/true)) DrainBeforeClose(connection.fd);
        return Close(connection);
      }
      HttpRequest& request = parser.request();
      request.remote_address = connection.remote_address;
      request.remote_port = connection.remote_port;
      HttpResponse response;
      try {
        handler_(request, response);
      } catch (const std::exception& e) {
        response = HttpResponse{500, "application/json", ErrorBody(e.what())};
      } catch (...) {
        response = HttpResponse{500, "application/json", ErrorBody("internal error")};
      }
      const bool close = !parser.keep_alive() || stopping_.load(std::memory_order_relaxed);
      if (!Answer(connection, response, close) || close) return Close(connection);
      parser.Reset();
      // Nothing more sent yet (the usual case): wait for the next request in the epoll set
      // rather than with another read.
      if (data.empty() && static_cast<std::size_t>(n) < sizeof(buffer)) return Rearm(connection);
    }
  }
}

void HttpServer::HousekeepingLoop() {
  const auto period = std::chrono::milliseconds(
      std::clamp<std::int64_t>(options_.keep_alive_timeout.count() / 4, 10, 1000));
  std::unique_lock wait_lock(housekeeping_mutex_);
  while (!stopping_.load()) {
    housekeeping_wake_.wait_for(wait_lock, period);
    const std::int64_t now = NowMillis();
    std::lock_guard lock(connections_mutex_);
    for (auto& [fd, connection] : connections_) {
      if (connection->busy.load(std::memory_order_acquire)) continue;
      const std::int64_t idle = now - connection->last_activity_ms.load(std::memory_order_relaxed);
      const Duration limit = connection->mid_request.load(std::memory_order_relaxed)
                                 ? options_.io_timeout
                                 : options_.keep_alive_timeout;
      // The socket turns readable (end of stream); the worker that wakes for it closes it.
      if (idle >= limit.count()) shutdown(fd, SHUT_RDWR);
    }
  }
}

}  // namespace settle
