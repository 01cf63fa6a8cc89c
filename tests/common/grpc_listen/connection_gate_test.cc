#include "settle/grpc_listen/connection_gate.h"

#include <arpa/inet.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "eventually.h"

namespace settle::grpc_listen {
namespace {

// A server with no method: every call is UNIMPLEMENTED. Enough to accept connections.
class NoMethods final : public grpc::CallbackGenericService {};

// A TCP connection from `source` to 127.0.0.1:port that sends the HTTP/2 preface and SETTINGS,
// as a gRPC client opens one; -1 if it cannot connect.
int Connect(const char* source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    ::close(fd);
    return -1;
  }
  const std::string preface("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0", 33);
  [[maybe_unused]] const ssize_t sent = ::send(fd, preface.data(), preface.size(), MSG_NOSIGNAL);
  return fd;
}

// Whether the server ended `fd` before sending any byte (a refusal at accept), waiting up to 5 s
// for a first byte or the end.
bool EndedWithoutAByte(int fd) {
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char byte = 0;
  return ::recv(fd, &byte, 1, 0) <= 0;
}

struct Served {
  explicit Served(ConnectionLimits limits) {
    auto listening = ConnectionGate::Listen("127.0.0.1", 0, limits);
    REQUIRE(listening.ok());
    gate = std::move(*listening);
    grpc::ServerBuilder builder;
    gate->AttachTo(builder, grpc::InsecureServerCredentials());
    builder.RegisterCallbackGenericService(&service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    gate->Start();
  }
  ~Served() {
    gate->Stop();
    server->Shutdown();
  }
  NoMethods service;
  std::unique_ptr<ConnectionGate> gate;
  std::unique_ptr<grpc::Server> server;
};

TEST_CASE("connections beyond the cap or a peer's share are closed at accept and counted",
          "[grpc_listen]") {
  Served served({.max_connections = 6, .max_connections_per_peer = 4});
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(Connect("127.0.0.2", served.gate->port()));
  REQUIRE(testing::Eventually([&] { return served.gate->counts().open == 4; }));
  // The fifth from 127.0.0.2 is over its share; two from 127.0.0.3 fill the cap; one more from
  // 127.0.0.4 is over it.
  const int fifth = Connect("127.0.0.2", served.gate->port());
  CHECK(EndedWithoutAByte(fifth));
  for (int i = 0; i < 2; ++i) held.push_back(Connect("127.0.0.3", served.gate->port()));
  REQUIRE(testing::Eventually([&] { return served.gate->counts().open == 6; }));
  const int over = Connect("127.0.0.4", served.gate->port());
  CHECK(EndedWithoutAByte(over));
  ConnectionCounts counts = served.gate->counts();
  CHECK(counts.accepted == 6);
  CHECK(counts.refused_per_peer == 1);
  CHECK(counts.refused_total == 1);
  ::close(fifth);
  ::close(over);

  // The connections the clients close are counted free once gRPC has closed them.
  for (int fd : held) ::close(fd);
  REQUIRE(testing::Eventually([&] { return served.gate->counts().open == 0; }));
  const int again = Connect("127.0.0.2", served.gate->port());
  REQUIRE(testing::Eventually([&] { return served.gate->counts().accepted == 7; }));
  CHECK(served.gate->counts().open == 1);
  ::close(again);
}

TEST_CASE("a gate refuses limits out of range and an address it cannot bind", "[grpc_listen]") {
  CHECK(ConnectionGate::Listen("127.0.0.1", 0, {.max_connections = 0}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(
      ConnectionGate::Listen("127.0.0.1", 0, {.max_connections = 2, .max_connections_per_peer = 3})
          .status()
          .code() == StatusCode::kInvalidArgument);
  auto first = ConnectionGate::Listen("127.0.0.1", 0, {});
  REQUIRE(first.ok());
  CHECK(ConnectionGate::Listen("127.0.0.1", (*first)->port(), {}).status().code() ==
        StatusCode::kUnavailable);
}

}  // namespace
}  // namespace settle::grpc_listen
