#include "settle/common/http_client_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "settle/common/http_response_parser.h"

namespace settle {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Waits for a non-blocking connect on `fd` to finish by `deadline`: 0 once connected, else
// the errno of the failure (ETIMEDOUT when the deadline passed).
int FinishConnect(int fd, SteadyClock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - SteadyClock::now());
    if (left.count() <= 0) return ETIMEDOUT;
    pollfd p{fd, POLLOUT, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return errno;
    if (ready == 0) return ETIMEDOUT;
    int error = 0;
    socklen_t len = sizeof(error);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) return errno;
    return error;
  }
}

// A connected blocking socket to `address`, or -1 with `error` set.
int ConnectTo(const addrinfo& address, SteadyClock::time_point deadline, int& error) {
  const int fd =
      socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = errno;
    return -1;
  }
  error = connect(fd, address.ai_addr, address.ai_addrlen) == 0 ? 0 : errno;
  if (error == EINPROGRESS) error = FinishConnect(fd, deadline);
  if (error != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

std::unique_ptr<HttpClientConnection> HttpClientConnection::Connect(const std::string& host,
                                                                    int port, Duration timeout,
                                                                    Answer& failure) {
  const auto deadline = SteadyClock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (rc != 0) {
    failure.failure = Failure::kResolve;
    failure.detail = gai_strerror(rc);
    return nullptr;
  }
  int error = ECONNREFUSED;
  int fd = -1;
  for (const addrinfo* a = addresses; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ConnectTo(*a, deadline, error);
    if (error == ETIMEDOUT) break;
  }
  freeaddrinfo(addresses);
  if (fd < 0) {
    failure.failure = error == ETIMEDOUT ? Failure::kConnectTimeout : Failure::kConnect;
    return nullptr;
  }
  return std::unique_ptr<HttpClientConnection>(new HttpClientConnection(fd));
}

HttpClientConnection::~HttpClientConnection() { close(fd_); }

const char* HttpClientConnection::Describe(Failure failure) {
  switch (failure) {
    case Failure::kNone: return "no failure";
    case Failure::kResolve: return "host name does not resolve";
    case Failure::kConnect: return "connection refused or unreachable";
    case Failure::kConnectTimeout: return "connect timed out";
    case Failure::kWrite: return "sending failed";
    case Failure::kTimeout: return "read timed out";
    case Failure::kClosed: return "connection closed before a complete answer";
    case Failure::kMalformed: return "malformed answer";
  }
  return "unknown failure";
}

bool HttpClientConnection::SetTimeout(Duration timeout) {
  if (timeout == timeout_set_) return true;
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(micros / 1'000'000);
  tv.tv_usec = static_cast<suseconds_t>(micros % 1'000'000);
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
      setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
    return false;
  }
  timeout_set_ = timeout;
  return true;
}

bool HttpClientConnection::SendAll(std::string_view head, std::string_view body) {
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  int first = 0;
  const int count = body.empty() ? 1 : 2;
  while (first < count) {
    msghdr message{};
    message.msg_iov = parts + first;
    message.msg_iovlen = static_cast<std::size_t>(count - first);
    const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;  // including a send timeout (EAGAIN)
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

HttpClientConnection::Answer HttpClientConnection::Exchange(std::string_view head,
                                                            std::string_view body,
                                                            Duration timeout,
                                                            std::size_t max_body_bytes) {
  Answer answer;
  reusable_ = false;  // until a complete answer says otherwise
  if (!SetTimeout(timeout) || !SendAll(head, body)) {
    answer.failure = Failure::kWrite;
    return answer;
  }
  HttpResponseParser parser(max_body_bytes);
  char buffer[16 * 1024];
  for (;;) {
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      answer.failure = Failure::kTimeout;
      return answer;
    }
    HttpResponseParser::State state;
    std::size_t consumed = 0;
    if (n <= 0) {
      state = parser.Finish();  // closed, or reset (treated alike)
    } else {
      state = parser.Feed(std::string_view(buffer, static_cast<std::size_t>(n)), consumed);
    }
    if (state == HttpResponseParser::State::kNeedMore) continue;
    if (state == HttpResponseParser::State::kError) {
      answer.failure = n <= 0 ? Failure::kClosed : Failure::kMalformed;
      answer.detail = parser.error();
      return answer;
    }
    answer.status = parser.status();
    answer.body = parser.TakeBody();
    // Bytes after the answer were not asked for: the connection is out of step.
    reusable_ = parser.keep_alive() && n > 0 && consumed == static_cast<std::size_t>(n);
    return answer;
  }
}

}  // namespace settle
