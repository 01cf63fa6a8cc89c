// Bodies of every size over HTTPS, both ways, on real sockets on 127.0.0.1: net::Server
// answering and net::Client reading, net::Client sending and net::Server reading, and the
// server's bytes read by OpenSSL directly, as curl or Prometheus would. Each is compared byte
// for byte with what plain HTTP carries. (Bodies over 16 KiB, one TLS record, once went out
// as their head alone.)
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "byte_pattern.h"
#include "settle/async/io_threads.h"
#include "settle/net/blocking_client.h"
#include "settle/net/server.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::net {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using testing::FirstDifference;
using testing::PatternBytes;

constexpr std::size_t kMaxBody = 1 << 20;     // the server's max_body_bytes (its default)
constexpr std::size_t kMaxAnswer = 16 << 20;  // the client's max_answer_bytes (its default)
constexpr std::size_t kNoDifference = std::string_view::npos;

// Sizes at every boundary a write or a read could cut at: one TLS record (16 KiB), which is
// also net's limit for writing a head and its body from one buffer (every size from 512 bytes
// below it to 16 above, so that head and body together cross it whatever the head's length),
// Asio's 64 KiB per write, the readers' 16 KiB chunks; then sizes up to `largest`.
std::vector<std::size_t> BodySizes(std::size_t largest) {
  std::set<std::size_t> sizes = {0, 1, 2, 100, 8191, 8192, 8193};
  for (std::size_t n = 16 * 1024 - 512; n <= 16 * 1024 + 16; ++n) sizes.insert(n);
  for (std::size_t n : {32767, 32768, 32769, 49152, 65535, 65536, 65537, 100'000, 262'147}) {
    sizes.insert(n);
  }
  for (std::size_t n : {largest / 2 + 3, largest - 1, largest}) sizes.insert(n);
  return {sizes.begin(), sizes.end()};
}

// GET /bytes?size=N&seed=S answers PatternBytes(N, S); POST /echo answers the body it got.
// Every answer names the caller's port in X-Peer-Port (answers on one connection share it).
// Over HTTPS with a certificate from a throwaway CA, or plain HTTP.
class BodyServer {
 public:
  explicit BodyServer(bool tls, Duration request_timeout = Duration(10000))
      : ca_(dir_.path()), io_(2) {
    ServerOptions options;
    options.limits.max_body_bytes = kMaxBody;
    options.request_timeout = request_timeout;
    if (tls) {
      const testing::TestCa::Issued cert = ca_.IssueForLocalhost();
      options.tls = {cert.cert_file, cert.key_file};
    }
    server_ =
        std::make_unique<Server>(io_.context(), options, [this](Request& r) { return Handle(r); });
    io_.Start();
    Result<int> port = server_->Start("127.0.0.1", 0);
    REQUIRE(port);
    origin_ = std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(*port);
    port_ = *port;
  }
  ~BodyServer() {
    server_->Stop();
    io_.Stop();
  }

  const std::string& ca_file() const { return ca_.ca_file(); }
  int port() const { return port_; }
  Url At(const std::string& target) const { return *ParseUrl(origin_ + target); }
  int handled() const { return handled_; }

 private:
  asio::awaitable<Response> Handle(Request& request) {
    ++handled_;
    Response response{200, "application/octet-stream", ""};
    if (request.path == "/bytes") {
      const std::size_t size = std::stoull(request.params.find("size")->second);
      const std::uint64_t seed = std::stoull(request.params.find("seed")->second);
      response.body = PatternBytes(size, seed);
    } else if (request.path == "/echo") {
      response.body = std::move(request.body);
    } else {
      response.status = 404;
    }
    response.headers.emplace_back("X-Peer-Port", std::to_string(request.remote_port));
    co_return response;
  }

  testing::TempDir dir_;
  testing::TestCa ca_;
  async::IoThreads io_;
  std::unique_ptr<Server> server_;
  std::string origin_;
  int port_ = 0;
  std::atomic<int> handled_{0};
};

std::string PeerPort(const ClientAnswer& answer) {
  const std::string* port = FindHeader(answer.headers, "X-Peer-Port");
  return port == nullptr ? "" : *port;
}

TEST_CASE(
    "an answer of any size up to the client's largest arrives whole and byte for byte over "
    "HTTPS as over HTTP, every one on one kept-alive connection",
    "[net][tls][bodies]") {
  for (const bool tls : {true, false}) {
    INFO((tls ? "HTTPS" : "HTTP"));
    BodyServer s(tls);
    auto client = BlockingClient::Create({.ca_file = s.ca_file()});
    REQUIRE(client);
    std::set<std::string> connections;
    for (const std::size_t size : BodySizes(kMaxAnswer)) {
      INFO("answer of " << size << " bytes");
      ClientRequest request;
      request.url = s.At("/bytes?size=" + std::to_string(size) + "&seed=" + std::to_string(size));
      Result<ClientAnswer> answer = (*client)->Send(request);
      REQUIRE(answer);
      REQUIRE(answer->status == 200);
      CHECK(answer->body_bytes == size);
      // Where they differ, not the bodies themselves: a failure prints an offset.
      CHECK(FirstDifference(answer->body, PatternBytes(size, size)) == kNoDifference);
      connections.insert(PeerPort(*answer));
    }
    CHECK(connections.size() == 1);

    // Past the largest it keeps: the first kMaxAnswer bytes, the rest read and counted, and
    // the connection still carries the next answer.
    ClientRequest over;
    over.url = s.At("/bytes?size=" + std::to_string(kMaxAnswer + 1) + "&seed=7");
    Result<ClientAnswer> cut = (*client)->Send(over);
    REQUIRE(cut);
    CHECK(cut->body_bytes == kMaxAnswer + 1);
    CHECK(FirstDifference(cut->body, PatternBytes(kMaxAnswer, 7)) == kNoDifference);
    ClientRequest after;
    after.url = s.At("/bytes?size=70000&seed=8");
    Result<ClientAnswer> next = (*client)->Send(after);
    REQUIRE(next);
    CHECK(FirstDifference(next->body, PatternBytes(70000, 8)) == kNoDifference);
    connections.insert(PeerPort(*cut));
    connections.insert(PeerPort(*next));
    CHECK(connections.size() == 1);
  }
}

TEST_CASE(
    "a request body of any size up to max_body_bytes reaches the handler whole over HTTPS as "
    "over HTTP, and one byte more gets a 413 before the handler runs that the client reads",
    "[net][tls][bodies]") {
  for (const bool tls : {true, false}) {
    INFO((tls ? "HTTPS" : "HTTP"));
    BodyServer s(tls);
    auto client = BlockingClient::Create({.ca_file = s.ca_file()});
    REQUIRE(client);
    std::set<std::string> connections;
    int sent = 0;
    for (const std::size_t size : BodySizes(kMaxBody)) {
      INFO("request body of " << size << " bytes");
      ClientRequest request;
      request.method = "POST";
      request.url = s.At("/echo");
      request.body = PatternBytes(size, size + 1);
      Result<ClientAnswer> answer = (*client)->Send(request);
      ++sent;
      REQUIRE(answer);
      REQUIRE(answer->status == 200);
      CHECK(answer->body_bytes == size);
      CHECK(FirstDifference(answer->body, request.body) == kNoDifference);
      connections.insert(PeerPort(*answer));
    }
    CHECK(connections.size() == 1);
    CHECK(s.handled() == sent);

    // Refused from the head, while the client is still sending the body: the server reads
    // and drops the rest, so that the client gets to read the answer (over TLS too, after
    // the server's close_notify), then closes the connection.
    for (const std::size_t size : {kMaxBody + 1, 4 * kMaxBody}) {
      INFO("request body of " << size << " bytes");
      ClientRequest over;
      over.method = "POST";
      over.url = s.At("/echo");
      over.body = PatternBytes(size, 9);
      Result<ClientAnswer> refused = (*client)->Send(over);
      INFO(refused.status().ToString());
      REQUIRE(refused);
      CHECK(refused->status == 413);
      CHECK_THAT(refused->body, Contains("body: larger than " + std::to_string(kMaxBody)));
      CHECK(s.handled() == sent);
    }

    // The server closed that connection; the next request opens another and is served.
    ClientRequest again;
    again.method = "POST";
    again.url = s.At("/echo");
    again.body = PatternBytes(kMaxBody, 10);
    Result<ClientAnswer> served = (*client)->Send(again);
    REQUIRE(served);
    CHECK(served->status == 200);
    CHECK(FirstDifference(served->body, again.body) == kNoDifference);
  }
}

// The bytes an HTTPS server on 127.0.0.1:port sends for `request` until it closes the
// connection, read with OpenSSL itself rather than net::Client: what any other client gets.
// Throws when the connection or the handshake fails; a read that waits 10 s ends it.
std::string OpenSslExchange(int port, const std::string& ca_file, const std::string& request) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()),
                                                            SSL_CTX_free);
  if (context == nullptr ||
      SSL_CTX_load_verify_locations(context.get(), ca_file.c_str(), nullptr) != 1) {
    throw std::runtime_error("OpenSslExchange: cannot use CA file " + ca_file);
  }
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* f) {
    if (*f >= 0) close(*f);
    delete f;
  });
  timeval ten_seconds{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &ten_seconds, sizeof(ten_seconds));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &ten_seconds, sizeof(ten_seconds));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    throw std::runtime_error("OpenSslExchange: cannot connect to port " + std::to_string(port));
  }
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  SSL_set1_host(ssl.get(), "127.0.0.1");
  if (SSL_connect(ssl.get()) != 1) {
    throw std::runtime_error("OpenSslExchange: TLS handshake failed");
  }
  std::size_t written = 0;
  while (written < request.size()) {
    const int n =
        SSL_write(ssl.get(), request.data() + written, static_cast<int>(request.size() - written));
    if (n <= 0) throw std::runtime_error("OpenSslExchange: cannot send the request");
    written += static_cast<std::size_t>(n);
  }
  std::string received;
  char buffer[16 * 1024];
  for (;;) {  // ends at the server's close_notify, its close, or a read waiting 10 s
    const int n = SSL_read(ssl.get(), buffer, sizeof(buffer));
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  return received;
}

TEST_CASE(
    "the server's answers over HTTPS are whole to a client other than net's own, OpenSSL "
    "reading Content-Length bytes of body after the head as curl and Prometheus do",
    "[net][tls][bodies]") {
  BodyServer s(/*tls=*/true);
  for (const std::size_t size :
       {std::size_t{1}, std::size_t{16383}, std::size_t{16384}, std::size_t{16385},
        std::size_t{21239}, std::size_t{65536}, kMaxBody + 7}) {
    INFO("answer of " << size << " bytes");
    const std::string received = OpenSslExchange(
        s.port(), s.ca_file(),
        "GET /bytes?size=" + std::to_string(size) + "&seed=" + std::to_string(size) +
            " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const std::size_t head_end = received.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    const std::string head = received.substr(0, head_end + 4);
    CHECK_THAT(head, Contains("HTTP/1.1 200 OK\r\n") &&
                         Contains("\r\nContent-Length: " + std::to_string(size) + "\r\n"));
    const std::string body = received.substr(head_end + 4);
    CHECK(body.size() == size);
    CHECK(FirstDifference(body, PatternBytes(size, size)) == kNoDifference);
  }
}

TEST_CASE(
    "over HTTPS, a request not whole within request_timeout gets its 408 through TLS, and the "
    "connection is closed",
    "[net][tls][limits]") {
  BodyServer s(/*tls=*/true, Duration(300));
  const std::string received =
      OpenSslExchange(s.port(), s.ca_file(),
                      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nhalf");
  CHECK_THAT(received, StartsWith("HTTP/1.1 408 ") && Contains("Connection: close") &&
                           Contains("the request timeout"));
  CHECK(s.handled() == 0);
}

}  // namespace
}  // namespace settle::net
