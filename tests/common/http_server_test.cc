// HttpServer from the outside: real sockets on 127.0.0.1, raw bytes where a well-behaved
// client could not send them.
#include "settle/common/http_server.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include "settle/common/http_client_connection.h"
#include "settle/common/http_response_parser.h"

namespace settle {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;

std::atomic<bool> slow_handler_entered{false};

// Echoes what the handler saw as JSON-ish text, so that tests can check it.
void Echo(const HttpRequest& request, HttpResponse& response) {
  if (request.path == "/throw") throw std::runtime_error("handler bug");
  if (request.path == "/slow") {
    slow_handler_entered = true;
    std::this_thread::sleep_for(200ms);  // a slow handler, the subject of the tests using it
  }
  response.status = request.path == "/missing" ? 404 : 200;
  response.content_type = "text/plain";
  response.body = request.method + " " + request.path + " body=" + request.body;
  for (const auto& [name, value] : request.params) response.body += " " + name + "=" + value;
  if (const std::string* tenant = request.Header("x-tenant")) response.body += " tenant=" + *tenant;
  response.body += " port=" + std::to_string(request.remote_port);
}

struct TestServer {
  explicit TestServer(HttpServerOptions options = {}) : server(options, Echo) {
    Result<int> started = server.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
  }
  HttpServer server;
  int port = 0;
};

// A client that sends raw bytes and reads raw answers.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  ~RawClient() { close(fd_); }

  void Send(const std::string& bytes) {
    REQUIRE(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }

  // The next answer: its status and body; status 0 if the connection closed first.
  std::pair<int, std::string> Read(std::chrono::milliseconds timeout = 5000ms) {
    HttpResponseParser parser(1 << 20);
    for (;;) {
      if (!pending_.empty()) {
        std::size_t consumed = 0;
        const auto state = parser.Feed(pending_, consumed);
        pending_.erase(0, consumed);
        if (state == HttpResponseParser::State::kDone) return {parser.status(), parser.body()};
        REQUIRE(state == HttpResponseParser::State::kNeedMore);
      }
      pollfd p{fd_, POLLIN, 0};
      REQUIRE(poll(&p, 1, static_cast<int>(timeout.count())) == 1);
      char buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return {0, ""};
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  // The next `size` bytes as they are (interim answers included, which Read skips).
  std::string ReadBytes(std::size_t size) {
    while (pending_.size() < size) {
      pollfd p{fd_, POLLIN, 0};
      REQUIRE(poll(&p, 1, 5000) == 1);
      char buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      REQUIRE(n > 0);
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
    std::string bytes = pending_.substr(0, size);
    pending_.erase(0, size);
    return bytes;
  }

  // Whether the server closed the connection within `timeout`.
  bool ClosedWithin(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
    char byte;
    return recv(fd_, &byte, 1, MSG_PEEK) <= 0;
  }

 private:
  int fd_;
  std::string pending_;
};

std::string Post(const std::string& target, const std::string& body,
                 const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_CASE("requests on a keep-alive connection reach the handler whole and get its answer",
          "[common][http_server]") {
  TestServer s;
  RawClient client(s.port);

  client.Send(Post("/api/x?gid=g%201&op=a+b", R"({"a":1})", "X-Tenant: acme\r\n"));
  const auto [status, body] = client.Read();
  client.Send("GET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto [status2, body2] = client.Read();

  CHECK(status == 200);
  CHECK_THAT(body, Contains(R"(POST /api/x body={"a":1} gid=g 1 op=a b tenant=acme port=)"));
  CHECK(status2 == 404);
  CHECK_THAT(body2, Contains("GET /missing body= "));
  // The same connection: the same client port.
  CHECK(body.substr(body.find("port=")) == body2.substr(body2.find("port=")));
}

TEST_CASE("chunked bodies, Expect: 100-continue and pipelined requests are served",
          "[common][http_server]") {
  TestServer s;
  RawClient client(s.port);

  client.Send("POST /c HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  CHECK(client.ReadBytes(interim.size()) == interim);
  client.Send("ok");
  CHECK_THAT(client.Read().second, Contains("body=ok"));

  client.Send("POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n" +
              Post("/second", "2") + Post("/third", "3"));
  CHECK_THAT(client.Read().second, Contains("POST /c body=abcde"));
  CHECK_THAT(client.Read().second, Contains("POST /second body=2"));
  CHECK_THAT(client.Read().second, Contains("POST /third body=3"));
}

TEST_CASE("a request the server cannot take gets a clear error, and the server keeps serving",
          "[common][http_server]") {
  HttpServerOptions options;
  options.max_body_bytes = 100;
  TestServer s(options);
  struct Case {
    std::string bytes;
    int status;
    std::string message;
  };
  for (const Case& c : {
           Case{"NOT HTTP AT ALL\r\n\r\n", 400, "malformed request target"},
           Case{"GET / HTTP/2.0\r\n\r\n", 505, "unsupported HTTP version"},
           Case{"GET nopath HTTP/1.1\r\n\r\n", 400, "malformed request target"},
           Case{"G(T / HTTP/1.1\r\n\r\n", 400, "malformed request method"},
           Case{"GET /\r\n\r\n", 400, "malformed request line"},
           Case{"GET / HTTP/1.1\r\nno colon\r\n\r\n", 400, "malformed header line"},
           Case{"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400, "invalid Content-Length"},
           Case{Post("/", std::string(101, 'b')), 413, "body larger than 100 bytes"},
           Case{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" +
                    std::string(101, 'b') + "\r\n0\r\n\r\n",
                413, "body larger than 100 bytes"},
           Case{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400,
                "invalid chunk size"},
           Case{"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
                "unsupported transfer coding"},
           Case{"GET / HTTP/1.1\r\nX: " + std::string(70 * 1024, 'h') + "\r\n\r\n", 431,
                "request head over"},
       }) {
    INFO(c.bytes.substr(0, 60));
    RawClient client(s.port);
    client.Send(c.bytes);
    const auto [status, body] = client.Read();
    CHECK(status == c.status);
    CHECK_THAT(body, Contains(c.message));
    CHECK(client.ClosedWithin(1000ms));
  }
  RawClient after(s.port);
  after.Send(Post("/still", "up"));
  CHECK(after.Read().first == 200);
}

TEST_CASE("a handler that throws answers 500 and the connection stays usable",
          "[common][http_server]") {
  TestServer s;
  RawClient client(s.port);

  client.Send(Post("/throw", ""));
  const auto [status, body] = client.Read();
  client.Send(Post("/fine", ""));

  CHECK(status == 500);
  CHECK_THAT(body, Contains("handler bug"));
  CHECK(client.Read().first == 200);
}

TEST_CASE("Connection: close and HTTP/1.0 without keep-alive close after the answer",
          "[common][http_server]") {
  TestServer s;
  for (const std::string& request :
       {std::string("GET /a HTTP/1.1\r\nConnection: close\r\n\r\n"),
        std::string("GET /a HTTP/1.0\r\n\r\n")}) {
    RawClient client(s.port);
    client.Send(request);
    CHECK(client.Read().first == 200);
    CHECK(client.ClosedWithin(1000ms));
  }
  RawClient kept(s.port);
  kept.Send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  CHECK(kept.Read().first == 200);
  CHECK_FALSE(kept.ClosedWithin(100ms));
}

TEST_CASE("idle connections and half-sent requests are closed after their timeouts",
          "[common][http_server]") {
  HttpServerOptions options;
  options.keep_alive_timeout = Duration(200);
  options.io_timeout = Duration(300);
  TestServer s(options);
  RawClient idle(s.port);
  idle.Send(Post("/a", ""));
  REQUIRE(idle.Read().first == 200);
  RawClient slow(s.port);
  slow.Send("POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");  // and never the rest

  CHECK(idle.ClosedWithin(2000ms));
  CHECK(slow.ClosedWithin(2000ms));
}

TEST_CASE("a connection waiting for a slow handler is not closed as idle",
          "[common][http_server]") {
  HttpServerOptions options;
  options.keep_alive_timeout = Duration(50);
  TestServer s(options);
  RawClient client(s.port);

  client.Send(Post("/slow", ""));  // 200 ms, four keep-alive timeouts

  CHECK(client.Read().first == 200);
}

TEST_CASE("many clients at once are all answered, on more connections than threads",
          "[common][http_server]") {
  HttpServerOptions options;
  options.threads = 4;
  TestServer s(options);
  constexpr int kClients = 16;
  constexpr int kRequests = 50;
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      HttpClientConnection::Answer failure;
      auto connection = HttpClientConnection::Connect("127.0.0.1", s.port, Duration(5000), failure);
      if (connection == nullptr) return;
      for (int i = 0; i < kRequests; ++i) {
        const std::string body = std::to_string(c) + "-" + std::to_string(i);
        const std::string head = "POST /n HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n";
        const auto answer = connection->Exchange(head, body, Duration(5000), 1024);
        if (answer.status == 200 && answer.body.find("body=" + body + " ") != std::string::npos) {
          ++answered;
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();

  CHECK(answered == kClients * kRequests);
}

TEST_CASE("stopping lets a running handler answer, then closes every connection",
          "[common][http_server]") {
  auto s = std::make_unique<TestServer>();
  RawClient busy(s->port);
  RawClient idle(s->port);
  idle.Send(Post("/a", ""));
  REQUIRE(idle.Read().first == 200);
  slow_handler_entered = false;
  busy.Send(Post("/slow", ""));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!slow_handler_entered && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(slow_handler_entered);  // the handler is running

  s->server.Stop();

  CHECK(busy.Read().first == 200);
  CHECK(busy.ClosedWithin(1000ms));
  CHECK(idle.ClosedWithin(1000ms));
}

TEST_CASE("a connection beyond max_connections gets a 503 and is closed; others keep working",
          "[http_server]") {
  TestServer t(HttpServerOptions{.threads = 2, .max_connections = 2});
  auto first = std::make_unique<RawClient>(t.port);
  RawClient second(t.port);
  first->Send(Post("/a", "1"));
  REQUIRE(first->Read().first == 200);  // both are registered once they have been served
  second.Send(Post("/b", "2"));
  REQUIRE(second.Read().first == 200);

  RawClient third(t.port);
  const auto [status, body] = third.Read();
  CHECK(status == 503);
  CHECK_THAT(body, Catch::Contains("too many connections"));
  CHECK(third.ClosedWithin(2000ms));

  first.reset();  // a slot frees up
  for (int attempt = 0; attempt < 100; ++attempt) {
    RawClient fourth(t.port);
    fourth.Send(Post("/c", "3"));
    if (fourth.Read().first == 200) break;  // the server may not have seen the close yet
    REQUIRE(attempt < 99);
    std::this_thread::sleep_for(10ms);
  }
  second.Send(Post("/b", "again"));
  CHECK(second.Read().first == 200);
}

}  // namespace
}  // namespace settle
