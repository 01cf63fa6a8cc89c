#include "stalled_grpc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace settle::testing {
namespace {

constexpr std::uint8_t kData = 0x0;
constexpr std::uint8_t kHeaders = 0x1;
constexpr std::uint8_t kRstStream = 0x3;
constexpr std::uint8_t kSettings = 0x4;
constexpr std::uint8_t kEndStream = 0x1;
constexpr std::uint8_t kEndHeaders = 0x4;
constexpr std::uint8_t kAck = 0x1;

std::string Frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                  const std::string& payload) {
  std::string frame;
  const std::size_t n = payload.size();
  frame += static_cast<char>((n >> 16) & 0xff);
  frame += static_cast<char>((n >> 8) & 0xff);
  frame += static_cast<char>(n & 0xff);
  frame += static_cast<char>(type);
  frame += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) frame += static_cast<char>((stream >> shift) & 0xff);
  return frame + payload;
}

// HPACK: a literal header field without indexing, whose name is the static table's `index`.
std::string Literal(int index, const std::string& value) {
  std::string field;
  if (index < 15) {
    field += static_cast<char>(index);
  } else {
    field += static_cast<char>(0x0f);
    field += static_cast<char>(index - 15);
  }
  field += static_cast<char>(value.size());  // under 127: no Huffman, one byte
  return field + value;
}

// HPACK: a literal header field without indexing, with a new name.
std::string Literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + static_cast<char>(name.size()) + name +
         static_cast<char>(value.size()) + value;
}

std::string Headers(const std::string& path, const std::string& token) {
  // :method POST (static 3), :scheme http (static 6), :path, :authority, content-type, te.
  std::string block = "\x83\x86";
  block += Literal(4, path);
  block += Literal(1, "stalled");
  block += Literal(31, "application/grpc");
  block += Literal("te", "trailers");
  if (!token.empty()) block += Literal("authorization", "Bearer " + token);
  return block;
}

}  // namespace

StalledGrpcConnection::StalledGrpcConnection(const Plan& plan) : ended_(plan.streams, false) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, plan.source.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(plan.port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot connect from " + plan.source);
  }
  if (plan.silent) return;
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  out += Frame(kSettings, 0, 0, "");
  out += Frame(kSettings, kAck, 0, "");
  std::string message(5, '\0');
  for (int i = 0; i < 4; ++i)
    message[1 + i] = static_cast<char>((plan.declared >> (24 - 8 * i)) & 0xff);
  message += std::string(std::min(plan.sent, plan.declared), 'x');
  for (int k = 0; k < plan.streams; ++k) {
    const auto stream = static_cast<std::uint32_t>(2 * k + 1);
    out += Frame(kHeaders, kEndHeaders, stream, Headers(plan.path, plan.token));
    out += Frame(kData, 0, stream, message);
  }
  // A refused connection may be closed before all of it is written: that is its answer.
  std::size_t written = 0;
  while (written < out.size()) {
    const ssize_t n = ::send(fd_, out.data() + written, out.size() - written, MSG_NOSIGNAL);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
}

StalledGrpcConnection::~StalledGrpcConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void StalledGrpcConnection::Poll() {
  char buffer[16384];
  while (!closed_) {
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      received_ += static_cast<std::size_t>(n);
      pending_.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    closed_ = true;  // end of stream or a reset
  }
  Parse();
}

void StalledGrpcConnection::Parse() {
  std::size_t at = 0;
  while (pending_.size() - at >= 9) {
    const auto* p = reinterpret_cast<const unsigned char*>(pending_.data() + at);
    const std::size_t length = (std::size_t{p[0]} << 16) | (std::size_t{p[1]} << 8) | p[2];
    if (pending_.size() - at < 9 + length) break;
    const std::uint8_t type = p[3];
    const std::uint8_t flags = p[4];
    const std::uint32_t stream = ((std::uint32_t{p[5]} & 0x7f) << 24) |
                                 (std::uint32_t{p[6]} << 16) | (std::uint32_t{p[7]} << 8) | p[8];
    const bool ends = type == kRstStream || (type == kHeaders && (flags & kEndStream) != 0);
    if (ends && stream % 2 == 1 && (stream - 1) / 2 < ended_.size())
      ended_[(stream - 1) / 2] = true;
    at += 9 + length;
  }
  pending_.erase(0, at);
}

int StalledGrpcConnection::ended_streams() const {
  return static_cast<int>(std::count(ended_.begin(), ended_.end(), true));
}

}  // namespace settle::testing
