// The client's keep-alive connections: what happens when the coordinator closes one.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "settle/sdk/client.h"

namespace settle::sdk {
namespace {

// A raw HTTP server on 127.0.0.1 that serves one connection at a time: on connection i it
// answers answers_per_connection[i] requests with keep-alive, then reads one more request and
// closes without answering (connections past the list answer everything). The project's own
// server cannot be made to drop a connection this way.
class DroppingServer {
 public:
  explicit DroppingServer(std::vector<int> answers_per_connection)
      : answers_per_connection_(std::move(answers_per_connection)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("DroppingServer: cannot listen");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~DroppingServer() {
    // Wakes the blocked accept() on Linux.
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }

  int port() const { return port_; }
  int requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int connections() const {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }

 private:
  // Reads one request's head (this test sends bodies only with Content-Length); false when
  // the peer closed.
  bool ReadRequest(int fd, std::string& buffer) {
    char chunk[4096];
    while (true) {
      const std::size_t end = buffer.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t body = 0;
        const std::size_t cl = buffer.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) body = std::strtoul(&buffer[cl + 16], nullptr, 10);
        if (buffer.size() >= end + 4 + body) {
          buffer.erase(0, end + 4 + body);
          std::lock_guard<std::mutex> lock(mu_);
          ++requests_;
          return true;
        }
      }
      const ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
  }

  void Serve() {
    for (std::size_t index = 0;; ++index) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++connections_;
      }
      const int answers =
          index < answers_per_connection_.size() ? answers_per_connection_[index] : 1'000'000;
      std::string buffer;
      for (int i = 0; i < answers && ReadRequest(fd, buffer); ++i) {
        const std::string body =
            R"({"gid":"g)" + std::to_string(index) + R"(","dtm_result":"SUCCESS"})";
        const std::string response =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            "Content-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body;
        if (::write(fd, response.data(), response.size()) < 0) break;
      }
      if (index < answers_per_connection_.size()) ReadRequest(fd, buffer);
      ::close(fd);
    }
  }

  std::vector<int> answers_per_connection_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  int requests_ = 0;
  int connections_ = 0;
};

std::unique_ptr<Client> ClientFor(int port) {
  auto client = Client::Create("http://127.0.0.1:" + std::to_string(port) + "/api/settle");
  REQUIRE(client.ok());
  return std::move(client).value();
}

TEST_CASE("a call that fails on a kept-alive connection is sent once more on a new one",
          "[sdk][client]") {
  DroppingServer server({1});
  auto client = ClientFor(server.port());
  auto first = client->NewGid();
  REQUIRE(first.ok());
  CHECK(*first == "g0");
  // The second call goes out on the kept-alive connection, which the server drops.
  auto second = client->NewGid();
  REQUIRE(second.ok());
  CHECK(*second == "g1");
  auto third = client->Post("prepare", R"({"gid":"g1","trans_type":"tcc"})");
  CHECK(third.ok());
  client.reset();
  CHECK(server.connections() == 2);
  CHECK(server.requests() == 4);
}

TEST_CASE("a call that fails on a new connection is not sent again", "[sdk][client]") {
  DroppingServer server({0, 0});
  auto client = ClientFor(server.port());
  auto gid = client->NewGid();
  REQUIRE_FALSE(gid.ok());
  CHECK(gid.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(gid.status().message(), Catch::Contains("closed"));
  client.reset();
  CHECK(server.requests() == 1);
  CHECK(server.connections() == 1);
}

}  // namespace
}  // namespace settle::sdk
