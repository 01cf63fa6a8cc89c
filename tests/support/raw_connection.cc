#include "raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

#include "settle/net/response_reader.h"

namespace settle::testing {

RawConnection::RawConnection(int port) : RawConnection(port, std::string()) {}

RawConnection::RawConnection(int port, const std::string& from_address) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ >= 0 && !from_address.empty()) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (inet_pton(AF_INET, from_address.c_str(), &local.sin_addr) != 1 ||
        bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      close(fd_);
      throw std::runtime_error("RawConnection: cannot bind to " + from_address);
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    throw std::runtime_error("RawConnection: cannot connect to 127.0.0.1:" + std::to_string(port));
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

void RawConnection::ShutdownSend() { shutdown(fd_, SHUT_WR); }

bool RawConnection::Readable(std::chrono::milliseconds timeout) {
  if (!pending_.empty()) return true;
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, static_cast<int>(timeout.count())) == 1;
}

bool RawConnection::Fill(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  char buffer[16 * 1024];
  const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
  if (n <= 0) return false;
  pending_.append(buffer, static_cast<std::size_t>(n));
  return true;
}

RawConnection::Answer RawConnection::Read(std::chrono::milliseconds timeout) {
  net::ResponseReader reader(1 << 20, 16 << 20);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!pending_.empty()) {
      reader.Append(pending_);
      pending_.clear();
    }
    net::ResponseReader::Step step = reader.Parse();
    if (step == net::ResponseReader::Step::kNeedMore) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() > 0 && Fill(left)) continue;
      step = reader.Eof();
    }
    if (step != net::ResponseReader::Step::kResponse) return {};
    pending_ = std::string(reader.leftover());
    return {reader.status(), reader.body(), reader.headers()};
  }
}

std::string RawConnection::ReadBytes(std::size_t size, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pending_.size() < size) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !Fill(left)) break;
  }
  std::string bytes = pending_.substr(0, size);
  pending_.erase(0, bytes.size());
  return bytes;
}

bool RawConnection::ClosedWithin(std::chrono::milliseconds timeout) {
  if (!pending_.empty()) return false;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK) <= 0;
}

}  // namespace settle::testing
