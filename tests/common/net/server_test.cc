// net::Server from the outside: real sockets on 127.0.0.1, raw bytes where a well-behaved
// client could not send them, HTTPS with a throwaway CA.
#include "settle/net/server.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <any>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "raw_connection.h"
#include "settle/async/event.h"
#include "settle/async/io_threads.h"
#include "settle/net/blocking_client.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::net {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using testing::RawConnection;

// Echoes what the handler saw. /throw throws; /hold waits for the test's event; /hold-count
// counts the requests holding there.
struct EchoServer {
  explicit EchoServer(ServerOptions options = {}, std::size_t io_threads = 2)
      : io(io_threads),
        server(io.context(), std::move(options), [this](Request& r) { return Handle(r); }) {
    io.Start();
    Result<int> started = server.Start("127.0.0.1", 0);
    INFO(started.status().ToString());
    REQUIRE(started);
    port = *started;
  }
  ~EchoServer() {
    release.Set();
    server.Stop();
    io.Stop();
  }

  asio::awaitable<Response> Handle(Request& request) {
    ++requests;
    if (request.path == "/throw") throw std::runtime_error("handler bug");
    if (request.path == "/hold") {
      ++holding;
      co_await release.Wait();
    }
    std::string body = request.method + " " + request.path + " body=" + request.body;
    for (const auto& [name, value] : request.params) body += " " + name + "=" + value;
    if (const std::string* tenant = request.Header("x-tenant")) body += " tenant=" + *tenant;
    if (!request.peer_subject.empty()) body += " subject=" + request.peer_subject;
    if (const int* judged = std::any_cast<int>(&request.head_judgement)) {
      body += " judged=" + std::to_string(*judged);
    }
    co_return Response{request.path == "/missing" ? 404 : 200, "text/plain", body};
  }

  // Polls until `count` requests wait at /hold.
  bool WaitForHolding(int count) {
    return testing::Eventually([&] { return holding >= count; }, 10s, 1ms);
  }

  async::IoThreads io;
  Server server;
  async::Event release;
  std::atomic<int> requests{0};
  std::atomic<int> holding{0};
  int port = 0;
};

std::string Post(const std::string& target, const std::string& body,
                 const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_CASE("requests on a keep-alive connection reach the handler whole and get its answer",
          "[net][server]") {
  EchoServer s;
  RawConnection c(s.port);
  REQUIRE(c.Send(Post("/api/x?gid=g%201&op=a+b", R"({"a":1})", "X-Tenant: acme\r\n")));
  const RawConnection::Answer first = c.Read();
  REQUIRE(c.Send("GET /missing HTTP/1.1\r\nHost: x\r\n\r\n"));
  const RawConnection::Answer second = c.Read();

  CHECK(first.status == 200);
  CHECK(first.body == R"(POST /api/x body={"a":1} gid=g 1 op=a b tenant=acme)");
  CHECK(*first.Header("Content-Type") == "text/plain");
  CHECK(first.Header("Connection") == nullptr);
  CHECK(second.status == 404);
}

TEST_CASE(
    "an ambiguous or malformed request gets one 4xx, and the bytes after it are never "
    "served",
    "[net][server]") {
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  for (const std::string& request : {
           std::string("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
           std::string("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "3\nabc\r\n0\r\n\r\n"),
           std::string("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"),
           std::string("GET /a HTTP/1.1\r\n\r\n"),
           std::string("GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
           std::string("GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n"),
           std::string("GET /a HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n"),
       }) {
    INFO(request);
    EchoServer s;
    RawConnection c(s.port);
    REQUIRE(c.Send(request + smuggled));
    const RawConnection::Answer answer = c.Read();
    CHECK(answer.status == 400);
    REQUIRE(answer.Header("Connection") != nullptr);
    CHECK(*answer.Header("Connection") == "close");
    CHECK_THAT(answer.body, Contains("\"message\""));
    CHECK(c.ClosedWithin(10s));  // and no second answer
    CHECK(s.requests == 0);
  }
}

TEST_CASE("over a limit: 431 for the head and its fields, 413 for the body, before it is sent",
          "[net][server]") {
  ServerOptions options;
  options.limits.max_head_bytes = 1024;
  options.limits.max_fields = 10;
  options.limits.max_body_bytes = 100;
  EchoServer s(options);

  RawConnection head(s.port);
  REQUIRE(head.Send("GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n"));
  CHECK(head.Read().status == 431);
  CHECK(head.ClosedWithin());

  RawConnection fields(s.port);
  std::string many = "GET /a HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 11; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  REQUIRE(fields.Send(many + "\r\n"));
  CHECK(fields.Read().status == 431);

  RawConnection body(s.port);
  REQUIRE(body.Send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"));
  const RawConnection::Answer refused = body.Read();  // the body was never sent
  CHECK(refused.status == 413);
  CHECK_THAT(refused.body, Contains("body: larger than 100 bytes"));
  CHECK(body.ClosedWithin());
  CHECK(s.requests == 0);
}

TEST_CASE("pipelined requests are answered in order on one connection", "[net][server]") {
  EchoServer s;
  RawConnection c(s.port);
  REQUIRE(c.Send(Post("/one", "1") + "GET /two HTTP/1.1\r\nHost: x\r\n\r\n" +
                 "POST /three HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "1;ext=1\r\n3\r\n0\r\nX-Trailer: t\r\n\r\n"));
  CHECK(c.Read().body == "POST /one body=1");
  CHECK(c.Read().body == "GET /two body=");
  CHECK(c.Read().body == "POST /three body=3");
}

TEST_CASE("an HTTP/1.0 request is answered and closed unless it asks for keep-alive",
          "[net][server]") {
  EchoServer s;
  RawConnection once(s.port);
  REQUIRE(once.Send("GET /a HTTP/1.0\r\n\r\n"));
  const RawConnection::Answer answer = once.Read();
  CHECK(answer.status == 200);
  CHECK(*answer.Header("Connection") == "close");
  CHECK(once.ClosedWithin());

  RawConnection kept(s.port);
  REQUIRE(kept.Send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  const RawConnection::Answer first = kept.Read();
  CHECK(*first.Header("Connection") == "keep-alive");
  REQUIRE(kept.Send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  CHECK(kept.Read().body == "GET /b body=");
}

TEST_CASE(
    "with max_requests_per_connection, the last answer it allows says Connection: close and the "
    "connection closes, pipelined requests after it unanswered",
    "[net][server]") {
  ServerOptions options;
  options.max_requests_per_connection = 3;
  EchoServer s(options);
  RawConnection c(s.port);
  REQUIRE(c.Send(Post("/one", "1")));
  const RawConnection::Answer first = c.Read();
  CHECK(first.Header("Connection") == nullptr);
  REQUIRE(c.Send(Post("/two", "2") + Post("/three", "3") + Post("/four", "4")));
  CHECK(c.Read().body == "POST /two body=2");
  const RawConnection::Answer third = c.Read();
  CHECK(third.body == "POST /three body=3");
  CHECK(*third.Header("Connection") == "close");
  CHECK(c.ClosedWithin());
  CHECK(s.requests == 3);

  RawConnection next(s.port);  // a new connection starts its own count
  REQUIRE(next.Send(Post("/five", "5")));
  const RawConnection::Answer fifth = next.Read();
  CHECK(fifth.body == "POST /five body=5");
  CHECK(fifth.Header("Connection") == nullptr);
}

TEST_CASE("Expect: 100-continue gets the interim answer before the body is sent", "[net][server]") {
  EchoServer s;
  RawConnection c(s.port);
  REQUIRE(
      c.Send("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  CHECK(c.ReadBytes(interim.size()) == interim);
  REQUIRE(c.Send("hello"));
  CHECK(c.Read().body == "POST /a body=hello");
}

TEST_CASE("a handler that throws is answered with 500 and the connection keeps serving",
          "[net][server]") {
  EchoServer s;
  RawConnection c(s.port);
  REQUIRE(c.Send("GET /throw HTTP/1.1\r\nHost: x\r\n\r\n"));
  const RawConnection::Answer failed = c.Read();
  CHECK(failed.status == 500);
  CHECK_THAT(failed.body, Contains("handler bug"));
  REQUIRE(c.Send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(c.Read().status == 200);
}

TEST_CASE("a hundred requests wait in handlers at once on two I/O threads", "[net][server]") {
  EchoServer s({}, 2);
  std::vector<std::unique_ptr<RawConnection>> connections;
  for (int i = 0; i < 100; ++i) {
    connections.push_back(std::make_unique<RawConnection>(s.port));
    REQUIRE(connections.back()->Send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  REQUIRE(s.WaitForHolding(100));  // no thread per request: all are in their handlers
  RawConnection other(s.port);
  REQUIRE(other.Send("GET /meanwhile HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(other.Read().status == 200);
  s.release.Set();
  for (auto& c : connections) CHECK(c->Read().body == "GET /hold body=");
}

TEST_CASE("a connection beyond max_connections gets a 503 and is closed", "[net][server]") {
  ServerOptions options;
  options.max_connections = 2;
  EchoServer s(options);
  RawConnection first(s.port);
  RawConnection second(s.port);
  REQUIRE(first.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(first.Read().status == 200);  // both are counted once they have been served
  REQUIRE(second.Send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(second.Read().status == 200);

  RawConnection third(s.port);
  const RawConnection::Answer refused = third.Read();
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Contains("too many connections"));
  CHECK(third.ClosedWithin());
  REQUIRE(second.Send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(second.Read().status == 200);
}

TEST_CASE(
    "an idle keep-alive connection is closed after its timeout, a stalled request after "
    "the I/O timeout",
    "[net][server]") {
  ServerOptions options;
  options.keep_alive_timeout = Duration(100);
  options.io_timeout = Duration(200);
  EchoServer s(options);
  RawConnection idle(s.port);
  REQUIRE(idle.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(idle.Read().status == 200);
  CHECK(idle.ClosedWithin(10s));

  RawConnection stalled(s.port);
  REQUIRE(stalled.Send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf"));
  const RawConnection::Answer cut = stalled.Read();
  CHECK(cut.status == 408);
  CHECK_THAT(cut.body, Contains("nothing received for 200 ms") && Contains("I/O timeout"));
  CHECK(stalled.ClosedWithin(10s));
  CHECK(s.requests == 1);
}

// Sends `bytes` one at a time, each soon after the last, until the server answers (or closes)
// or they run out. Returns how many were sent. Waits for the answer between bytes, never for
// time alone: each byte goes as soon as 10 ms pass without one.
std::size_t Trickle(RawConnection& c, std::string_view bytes) {
  std::size_t sent = 0;
  for (char byte : bytes) {
    if (c.Readable(10ms)) break;
    if (!c.Send(std::string_view(&byte, 1))) break;
    ++sent;
  }
  return sent;
}

// The statuses ServerOptions::refusal was asked for, as a server counts them.
struct Refusals {
  std::function<Response(int, const std::string&)> Counter() {
    return [this](int status, const std::string& problem) {
      std::lock_guard lock(mu);
      statuses.push_back(status);
      return Response{status, "application/json", MessageBody(problem)};
    };
  }
  std::size_t Count(int status) {
    std::lock_guard lock(mu);
    return static_cast<std::size_t>(std::count(statuses.begin(), statuses.end(), status));
  }
  std::mutex mu;
  std::vector<int> statuses;
};

TEST_CASE(
    "a head trickled a byte at a time is cut at request_timeout with a 408, though each byte "
    "comes well within io_timeout",
    "[net][server][limits]") {
  Refusals refusals;
  ServerOptions options;
  options.request_timeout = Duration(300);
  options.io_timeout = Duration(10000);
  options.refusal = refusals.Counter();
  EchoServer s(options);
  RawConnection c(s.port);
  const auto start = std::chrono::steady_clock::now();
  // 10 KB of one header at about a byte per 10 ms would take over 100 s, within the head
  // limit: only the whole-request deadline ends it.
  const std::size_t sent =
      Trickle(c, "GET /a HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(10000, 'a'));
  const RawConnection::Answer cut = c.Read();
  const auto took = std::chrono::steady_clock::now() - start;

  CHECK(cut.status == 408);
  CHECK_THAT(cut.body,
             Contains("not received whole within 300 ms") && Contains("the request timeout"));
  CHECK(*cut.Header("Connection") == "close");
  CHECK(c.ClosedWithin());
  CHECK(sent > 1);
  CHECK(sent < 10000);
  CHECK(took >= 300ms);
  CHECK(s.requests == 0);
  CHECK(refusals.Count(408) == 1);
}

TEST_CASE(
    "empty lines trickled before a request line count toward request_timeout, not as an idle "
    "connection",
    "[net][server][limits]") {
  ServerOptions options;
  options.request_timeout = Duration(300);
  options.keep_alive_timeout = Duration(10000);
  EchoServer s(options);
  RawConnection c(s.port);
  std::string empty_lines;
  for (int i = 0; i < 5000; ++i) empty_lines += "\r\n";
  const std::size_t sent = Trickle(c, empty_lines);
  const RawConnection::Answer cut = c.Read();
  CHECK(cut.status == 408);
  CHECK(sent < empty_lines.size());
  CHECK(s.requests == 0);
}

TEST_CASE("a body trickled a byte at a time is cut at request_timeout with a 408",
          "[net][server][limits]") {
  ServerOptions options;
  options.request_timeout = Duration(300);
  options.io_timeout = Duration(10000);
  EchoServer s(options);
  RawConnection c(s.port);
  REQUIRE(c.Send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n"));
  const std::size_t sent = Trickle(c, std::string(10000, 'b'));
  const RawConnection::Answer cut = c.Read();

  CHECK(cut.status == 408);
  CHECK_THAT(cut.body, Contains("the request timeout"));
  CHECK(sent < 10000);
  CHECK(s.requests == 0);
  // A request sent at once on a new connection is served: the deadline is per request.
  RawConnection quick(s.port);
  REQUIRE(quick.Send(Post("/b", "body")));
  CHECK(quick.Read().body == "POST /b body=body");
}

TEST_CASE(
    "the request deadline starts again with each request of a keep-alive connection, and "
    "not while it is idle",
    "[net][server][limits]") {
  ServerOptions options;
  options.request_timeout = Duration(300);
  options.keep_alive_timeout = Duration(10000);
  EchoServer s(options);
  RawConnection c(s.port);
  REQUIRE(c.Send(Post("/one", "1")));
  REQUIRE(c.Read().body == "POST /one body=1");
  // Idle for longer than the request timeout: the keep-alive timeout governs it.
  CHECK_FALSE(c.Readable(600ms));
  REQUIRE(c.Send(Post("/two", "2")));
  CHECK(c.Read().body == "POST /two body=2");
}

// A server whose judge refuses every head without "Authorization: Bearer good" with 401, and
// records the heads it saw.
struct JudgedServer {
  static ServerOptions Options(JudgedServer* self) {
    ServerOptions options;
    options.judge_head = [self](const Request& head) -> HeadVerdict {
      {
        std::lock_guard lock(self->mu);
        self->heads.push_back(head);
      }
      const std::string* authorization = head.Header("Authorization");
      if (authorization != nullptr && *authorization == "Bearer good") return std::nullopt;
      return Response{401, "application/json", MessageBody("a token is required")};
    };
    return options;
  }
  JudgedServer() : echo(Options(this)) {}
  std::vector<Request> Heads() {
    std::lock_guard lock(mu);
    return heads;
  }
  std::mutex mu;
  std::vector<Request> heads;
  EchoServer echo;
};

TEST_CASE(
    "a head the judge refuses gets its answer before any of its body is sent, and the "
    "connection is closed",
    "[net][server][limits]") {
  JudgedServer s;
  RawConnection c(s.echo.port);
  REQUIRE(c.Send("POST /api/x?gid=g1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n"));
  const RawConnection::Answer refused = c.Read();  // not a byte of the 1 MiB was sent

  CHECK(refused.status == 401);
  CHECK_THAT(refused.body, Contains("a token is required"));
  CHECK(*refused.Header("Connection") == "close");
  CHECK(c.ClosedWithin());
  CHECK(s.echo.requests == 0);
  const std::vector<Request> heads = s.Heads();
  REQUIRE(heads.size() == 1);
  CHECK(heads[0].method == "POST");
  CHECK(heads[0].path == "/api/x");
  CHECK(heads[0].params.find("gid")->second == "g1");
  CHECK(*heads[0].Header("Content-Length") == "1048576");
  CHECK(heads[0].remote_address == "127.0.0.1");
  CHECK(heads[0].body.empty());

  // An accepted head goes on to its body and its handler, which sees who sent it.
  RawConnection good(s.echo.port);
  REQUIRE(good.Send(Post("/api/y", "hello", "Authorization: Bearer good\r\n")));
  CHECK(good.Read().body == "POST /api/y body=hello");
}

TEST_CASE(
    "a refused head that asks for 100-continue gets the refusal, never the 100, and an "
    "accepted one gets the 100",
    "[net][server][limits]") {
  JudgedServer s;
  RawConnection refused(s.echo.port);
  REQUIRE(refused.Send(
      "POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1048576\r\n\r\n"));
  CHECK(refused.ReadBytes(12) == "HTTP/1.1 401");
  CHECK(refused.Read().status == 0);  // the rest of that answer; nothing after it

  RawConnection accepted(s.echo.port);
  REQUIRE(accepted.Send(
      "POST /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nExpect: 100-continue\r\n"
      "Content-Length: 5\r\n\r\n"));
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  CHECK(accepted.ReadBytes(interim.size()) == interim);
  REQUIRE(accepted.Send("hello"));
  CHECK(accepted.Read().body == "POST /a body=hello");
  CHECK(s.echo.requests == 1);
}

TEST_CASE(
    "what the head judge leaves with a head reaches that request's handler, once per request of "
    "a keep-alive connection",
    "[net][server][limits]") {
  std::atomic<int> judged{0};
  ServerOptions options;
  options.judge_head = [&judged](Request& head) -> HeadVerdict {
    // Left only for /noted: a request the judge leaves nothing for has nothing.
    if (head.path == "/noted") head.head_judgement = ++judged;
    return std::nullopt;
  };
  EchoServer s(options);
  RawConnection c(s.port);
  REQUIRE(c.Send(Post("/noted", "a")));
  CHECK(c.Read().body == "POST /noted body=a judged=1");
  REQUIRE(c.Send(Post("/plain", "b")));
  CHECK(c.Read().body == "POST /plain body=b");
  REQUIRE(c.Send(Post("/noted", "c") + Post("/noted", "d")));
  CHECK(c.Read().body == "POST /noted body=c judged=2");
  CHECK(c.Read().body == "POST /noted body=d judged=3");
  CHECK(judged == 3);
}

TEST_CASE(
    "one peer address holds max_connections_per_peer connections at most, and others are still "
    "served",
    "[net][server][limits]") {
  Refusals refusals;
  ServerOptions options;
  options.max_connections_per_peer = 3;
  options.refusal = refusals.Counter();
  EchoServer s(options);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawConnection>(s.port, "127.0.0.2"));
    REQUIRE(held.back()->Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
    REQUIRE(held.back()->Read().status == 200);  // accepted and counted
  }
  RawConnection fourth(s.port, "127.0.0.2");
  const RawConnection::Answer refused = fourth.Read();
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Contains("too many connections from 127.0.0.2") &&
                               Contains("3 open, the cap per peer address"));
  CHECK(fourth.ClosedWithin());
  CHECK(refusals.Count(503) == 1);

  RawConnection other(s.port, "127.0.0.1");
  REQUIRE(other.Send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(other.Read().status == 200);

  // One of the three closes: the peer may open another.
  held.pop_back();
  REQUIRE(testing::Eventually([&] { return s.server.connections() == 3; }, 10s, 1ms));
  RawConnection again(s.port, "127.0.0.2");
  REQUIRE(again.Send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(again.Read().status == 200);
}

TEST_CASE("stopping lets a running handler answer, closes idle connections, and returns",
          "[net][server]") {
  auto s = std::make_unique<EchoServer>();
  RawConnection idle(s->port);
  REQUIRE(idle.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(idle.Read().status == 200);
  RawConnection busy(s->port);
  REQUIRE(busy.Send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(s->WaitForHolding(1));

  std::thread stopper([&] { s->server.Stop(); });
  CHECK(idle.ClosedWithin(10s));  // at once, while the busy one still holds
  s->release.Set();
  const RawConnection::Answer answer = busy.Read();
  CHECK(answer.status == 200);
  CHECK(*answer.Header("Connection") == "close");
  CHECK(busy.ClosedWithin(10s));
  stopper.join();
}

TEST_CASE(
    "HTTPS: a client trusting the CA gets answers, one that does not, or that reached "
    "another name, is refused in the handshake",
    "[net][server][tls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  ServerOptions options;
  options.tls = {cert.cert_file, cert.key_file};
  EchoServer s(options);

  auto trusting = BlockingClient::Create({.ca_file = ca.ca_file()});
  REQUIRE(trusting);
  for (const char* url : {"https://127.0.0.1:", "HTTPS://localhost:"}) {
    INFO(url);
    ClientRequest request;
    request.method = "POST";
    request.url = *ParseUrl(std::string(url) + std::to_string(s.port) + "/secure?x=1");
    request.body = "over tls";
    Result<ClientAnswer> answer = (*trusting)->Send(request);
    REQUIRE(answer);
    CHECK(answer->status == 200);
    CHECK(answer->body == "POST /secure body=over tls x=1");
  }

  testing::TestCa other(dir.path(), "other");
  auto distrusting = BlockingClient::Create({.ca_file = other.ca_file()});
  REQUIRE(distrusting);
  ClientRequest request;
  request.url = *ParseUrl("https://127.0.0.1:" + std::to_string(s.port) + "/a");
  Result<ClientAnswer> refused = (*distrusting)->Send(request);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(refused.status().message(), Contains("TLS handshake") && Contains("failed"));

  const testing::TestCa::Issued elsewhere = ca.Issue("elsewhere", "DNS:elsewhere.example");
  ServerOptions wrong_name;
  wrong_name.tls = {elsewhere.cert_file, elsewhere.key_file};
  EchoServer misnamed(wrong_name);
  request.url = *ParseUrl("https://127.0.0.1:" + std::to_string(misnamed.port) + "/a");
  Result<ClientAnswer> mismatch = (*trusting)->Send(request);
  REQUIRE_FALSE(mismatch);
  CHECK_THAT(mismatch.status().message(), Contains("TLS handshake"));

  RawConnection plain(s.port);  // plain HTTP to an HTTPS port: no answer, closed
  REQUIRE(plain.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(plain.Read().status == 0);
}

// GET /who over HTTPS from a client presenting `presented` (none when empty).
Result<ClientAnswer> GetWho(int port, const std::string& ca_file,
                            const testing::TestCa::Issued& presented = {}) {
  auto client = BlockingClient::Create({.ca_file = ca_file,
                                        .client_cert_file = presented.cert_file,
                                        .client_key_file = presented.key_file});
  REQUIRE(client);
  ClientRequest request;
  request.url = *ParseUrl("https://localhost:" + std::to_string(port) + "/who");
  return (*client)->Send(request);
}

TEST_CASE(
    "mutual TLS required: no certificate, one from another CA, or an expired one fails the "
    "handshake before any handler runs, and the server keeps serving good ones",
    "[net][server][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  testing::TestCa other(dir.path(), "other");
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  ServerOptions options;
  options.tls = {.cert_file = cert.cert_file,
                 .key_file = cert.key_file,
                 .client_ca_file = ca.ca_file(),
                 .require_client_certificate = true};
  EchoServer s(options);
  const testing::TestCa::Issued good = ca.IssueClient("order", "/O=Shop/CN=order-service");

  struct Refused {
    const char* what;
    testing::TestCa::Issued presented;
  };
  for (const Refused& refused :
       {Refused{"no certificate", {}},
        Refused{"another CA's", other.IssueClient("order", "/O=Shop/CN=order-service")},
        Refused{"expired", ca.IssueExpiredClient("old", "/O=Shop/CN=order-service")}}) {
    INFO(refused.what);
    Result<ClientAnswer> answer = GetWho(s.port, ca.ca_file(), refused.presented);
    REQUIRE_FALSE(answer);
    CHECK(answer.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(answer.status().message(), Contains("TLS handshake") && Contains("failed"));
    CHECK(s.requests == 0);

    Result<ClientAnswer> accepted = GetWho(s.port, ca.ca_file(), good);
    REQUIRE(accepted);
    CHECK(accepted->body == "GET /who body= subject=CN=order-service,O=Shop");
    s.requests = 0;
  }

  RawConnection plain(s.port);  // plain HTTP: no answer, closed
  REQUIRE(plain.Send("GET /who HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(plain.Read().status == 0);
  CHECK(s.requests == 0);
}

TEST_CASE(
    "mutual TLS optional: a client without a certificate gets in with no subject, and a bad "
    "certificate still fails the handshake",
    "[net][server][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  testing::TestCa other(dir.path(), "other");
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  ServerOptions options;
  options.tls = {
      .cert_file = cert.cert_file, .key_file = cert.key_file, .client_ca_file = ca.ca_file()};
  EchoServer s(options);

  Result<ClientAnswer> anonymous = GetWho(s.port, ca.ca_file());
  REQUIRE(anonymous);
  CHECK(anonymous->body == "GET /who body=");

  Result<ClientAnswer> foreign =
      GetWho(s.port, ca.ca_file(), other.IssueClient("x", "/O=Elsewhere/CN=intruder"));
  REQUIRE_FALSE(foreign);
  CHECK_THAT(foreign.status().message(), Contains("TLS handshake"));
  Result<ClientAnswer> expired =
      GetWho(s.port, ca.ca_file(), ca.IssueExpiredClient("old", "/O=Shop/CN=old"));
  REQUIRE_FALSE(expired);
  CHECK_THAT(expired.status().message(), Contains("TLS handshake"));
  CHECK(s.requests == 1);

  Result<ClientAnswer> known =
      GetWho(s.port, ca.ca_file(), ca.IssueClient("ops", "/O=Shop/OU=Ops/CN=alice"));
  REQUIRE(known);
  CHECK(known->body == "GET /who body= subject=CN=alice,OU=Ops,O=Shop");
}

TEST_CASE(
    "a client certificate or key that cannot be used, or a key of another certificate, is "
    "refused when the client is made, naming the file",
    "[net][client][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued a = ca.IssueClient("a", "/CN=a");
  const testing::TestCa::Issued b = ca.IssueClient("b", "/CN=b");

  auto missing = BlockingClient::Create(
      {.client_cert_file = dir.File("nope.pem"), .client_key_file = a.key_file});
  REQUIRE_FALSE(missing);
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(missing.status().message(), Contains("nope.pem"));

  auto mismatched =
      BlockingClient::Create({.client_cert_file = a.cert_file, .client_key_file = b.key_file});
  REQUIRE_FALSE(mismatched);
  CHECK(mismatched.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(mismatched.status().message(),
             Contains(b.key_file) && Contains("does not match certificate"));

  auto half = BlockingClient::Create({.client_cert_file = a.cert_file});
  REQUIRE_FALSE(half);
  CHECK(half.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("an unusable client CA file, or one without HTTPS, is refused at start, naming the file",
          "[net][server][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  asio::io_context context;
  Server server(context, {.tls = {cert.cert_file, cert.key_file, dir.File("no-ca.pem")}},
                [](Request&) -> asio::awaitable<Response> { co_return Response{}; });
  Result<int> started = server.Start("127.0.0.1", 0);
  REQUIRE_FALSE(started);
  CHECK(started.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(started.status().message(), Contains("no-ca.pem"));

  // A client CA over plain HTTP would look like protection and be none.
  Server plain(context, {.tls = {.client_ca_file = ca.ca_file()}},
               [](Request&) -> asio::awaitable<Response> { co_return Response{}; });
  Result<int> refused = plain.Start("127.0.0.1", 0);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(), Contains("without a certificate"));
}

TEST_CASE("an unusable certificate or key is refused at start, naming the file",
          "[net][server][tls]") {
  testing::TempDir dir;
  asio::io_context context;
  Server missing(context, {.tls = {dir.File("nope.pem"), dir.File("nope.key")}},
                 [](Request&) -> asio::awaitable<Response> { co_return Response{}; });
  Result<int> started = missing.Start("127.0.0.1", 0);
  REQUIRE_FALSE(started);
  CHECK(started.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(started.status().message(), Contains("nope.pem"));
}

}  // namespace
}  // namespace settle::net
