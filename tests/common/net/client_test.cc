// net::Client against real servers on 127.0.0.1: the project's own, and a canned one that
// answers with whatever bytes a test gives it.
#include "settle/net/client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "fake_clock.h"
#include "settle/async/await.h"
#include "settle/async/event.h"
#include "settle/async/io_threads.h"
#include "settle/net/blocking_client.h"
#include "settle/net/server.h"

namespace settle::net {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;

struct TestServer {
  explicit TestServer(ServerOptions options = {})
      : io(2), server(io.context(), std::move(options), [this](Request& r) { return Handle(r); }) {
    io.Start();
    port = *server.Start("127.0.0.1", 0);
  }
  ~TestServer() {
    release.Set();
    server.Stop();
    io.Stop();
  }
  asio::awaitable<Response> Handle(Request& request) {
    ++requests;
    last_port = request.remote_port;
    if (request.path == "/hold") co_await release.Wait();
    if (request.path == "/big") co_return Response{200, "text/plain", std::string(100'000, 'x')};
    const std::string* extra = request.Header("X-Extra");
    co_return Response{request.path == "/conflict" ? 409 : 200, "application/json",
                       request.method + " " + request.target + " " + request.body +
                           (extra != nullptr ? " extra=" + *extra : "")};
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }

  async::IoThreads io;
  Server server;
  async::Event release;
  std::atomic<int> requests{0};
  std::atomic<int> last_port{0};  // the client's end of the last request's connection
  int port = 0;
};

// Answers every request on each connection with `answer`, then closes the connection if
// `close_after` is set. Reads a request as a head (and ignores any body).
class CannedServer {
 public:
  CannedServer(std::string answer, bool close_after)
      : answer_(std::move(answer)), close_after_(close_after) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(listen(fd_, 16) == 0);
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  void Serve() {
    for (;;) {
      const int connection = accept(fd_, nullptr, nullptr);
      if (connection < 0) return;
      std::string received;
      char buffer[4096];
      for (;;) {
        const ssize_t n = recv(connection, buffer, sizeof(buffer), 0);
        if (n <= 0) break;
        received.append(buffer, static_cast<std::size_t>(n));
        if (received.find("\r\n\r\n") == std::string::npos) continue;
        received.clear();
        send(connection, answer_.data(), answer_.size(), MSG_NOSIGNAL);
        if (close_after_) break;
      }
      close(connection);
    }
  }

  std::string answer_;
  bool close_after_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::unique_ptr<BlockingClient> MakeClient(ClientOptions options = {}) {
  auto client = BlockingClient::Create(std::move(options));
  REQUIRE(client);
  return std::move(*client);
}

ClientRequest Get(const std::string& url, Duration timeout = Duration(10000)) {
  ClientRequest request;
  request.url = *ParseUrl(url);
  request.timeout = timeout;
  return request;
}

TEST_CASE("requests to one host share a keep-alive connection", "[net][client]") {
  TestServer s;
  auto client = MakeClient();
  for (int i = 0; i < 5; ++i) {
    ClientRequest request = Get(s.Url("/a?i=" + std::to_string(i)));
    request.method = "POST";
    request.body = "{}";
    request.headers = {{"X-Extra", "yes"}};
    Result<ClientAnswer> answer = client->Send(request);
    REQUIRE(answer);
    CHECK(answer->status == 200);
    CHECK(answer->body == "POST /a?i=" + std::to_string(i) + " {} extra=yes");
  }
  CHECK(s.server.connections() == 1);
}

TEST_CASE("a connection idle for longer than max_idle_time by the client's clock is not reused",
          "[net][client]") {
  TestServer s;
  testing::FakeClock clock;
  auto client = MakeClient({.max_idle_time = Duration(4000), .clock = &clock});
  REQUIRE(client->Send(Get(s.Url("/a"))));
  const int first = s.last_port;

  clock.Advance(Duration(4000));
  REQUIRE(client->Send(Get(s.Url("/b"))));
  CHECK(s.last_port == first);  // idle for max_idle_time exactly: reused

  clock.Set(clock.Now() + Duration(60'000));  // the wall clock does not age it
  REQUIRE(client->Send(Get(s.Url("/c"))));
  CHECK(s.last_port == first);

  clock.Advance(Duration(4001));
  REQUIRE(client->Send(Get(s.Url("/d"))));
  CHECK(s.last_port != first);  // a new connection
}

TEST_CASE("calls to many origins keep at most max_idle_total idle connections in all",
          "[net][client][bounds]") {
  std::vector<std::unique_ptr<TestServer>> servers;
  for (int i = 0; i < 5; ++i) servers.push_back(std::make_unique<TestServer>());
  testing::FakeClock clock;
  auto client = MakeClient({.max_idle_total = 2, .max_idle_time = Duration(4000), .clock = &clock});
  for (auto& s : servers) REQUIRE(client->Send(Get(s->Url("/a"))));
  // Two are kept for reuse; the others were closed as their requests ended.
  const auto open = [&] {
    std::size_t n = 0;
    for (auto& s : servers) n += s->server.connections();
    return n;
  };
  CHECK(testing::Eventually([&] { return open() == 2; }));
  // The first two origins' connections are the ones kept: reused.
  const int first = servers[0]->last_port;
  REQUIRE(client->Send(Get(servers[0]->Url("/b"))));
  CHECK(servers[0]->last_port == first);
  // Once they are too old to reuse, another origin's connection takes a place.
  clock.Advance(Duration(4001));
  REQUIRE(client->Send(Get(servers[4]->Url("/b"))));
  CHECK(testing::Eventually([&] { return servers[4]->server.connections() == 1; }));
  CHECK(testing::Eventually([&] { return open() <= 2; }));
}

TEST_CASE("any status is an answer, a 409 is not an error", "[net][client]") {
  TestServer s;
  Result<ClientAnswer> answer = MakeClient()->Send(Get(s.Url("/conflict")));
  REQUIRE(answer);
  CHECK(answer->status == 409);
}

TEST_CASE(
    "a kept-alive connection the server closed while idle is replaced, once, for an "
    "idempotent request",
    "[net][client]") {
  ServerOptions options;
  options.keep_alive_timeout = Duration(50);
  TestServer s(options);
  auto client = MakeClient({.max_idle_time = Duration(60'000)});
  REQUIRE(client->Send(Get(s.Url("/first"))));
  // Both waits for the server to have no connection share these 10 s.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  const auto no_connections = [&] {
    return testing::Eventually(
        [&] { return s.server.connections() == 0; },
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
        1ms);
  };
  REQUIRE(no_connections());  // the pooled connection is dead now

  Result<ClientAnswer> again = client->Send(Get(s.Url("/again")));
  REQUIRE(again);
  CHECK(again->status == 200);

  no_connections();
  ClientRequest once = Get(s.Url("/once"));
  once.idempotent = false;
  Result<ClientAnswer> refused = client->Send(once);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Contains("connection closed by 127.0.0.1:"));
  CHECK(s.requests == 2);
}

TEST_CASE("a server slower than the timeout is Unavailable, naming the wait", "[net][client]") {
  TestServer s;
  Result<ClientAnswer> slow = MakeClient()->Send(Get(s.Url("/hold"), Duration(100)));
  REQUIRE_FALSE(slow);
  CHECK(slow.status().code() == StatusCode::kPending);  // sent: the server may act on it
  CHECK_THAT(slow.status().message(),
             Contains("timed out after 100 ms waiting for 127.0.0.1:" + std::to_string(s.port)));
}

TEST_CASE("a cancelled request ends at once while the server holds its answer, as Pending",
          "[net][client][cancel]") {
  TestServer s;
  auto client = MakeClient();
  ClientRequest request = Get(s.Url("/hold"), Duration(60'000));
  request.cancellation = std::make_shared<Cancellation>();
  const std::shared_ptr<Cancellation> cancellation = request.cancellation;
  std::future<Result<ClientAnswer>> sending =
      std::async(std::launch::async, [&] { return client->Send(request); });
  REQUIRE(testing::Eventually([&] { return s.requests == 1; }));
  cancellation->Cancel();
  REQUIRE(sending.wait_for(10s) == std::future_status::ready);  // not the 60 s timeout
  const Result<ClientAnswer> cut = sending.get();
  REQUIRE_FALSE(cut);
  CHECK(cut.status().code() == StatusCode::kPending);  // sent: the server may act on it
  CHECK(cut.status().message() ==
        "cancelled while waiting for 127.0.0.1:" + std::to_string(s.port));
  s.release.Set();
  const Result<ClientAnswer> after = client->Send(Get(s.Url("/after")));
  REQUIRE(after);
  CHECK(after->status == 200);
}

TEST_CASE("a request whose cancellation was cancelled before it started is never sent",
          "[net][client][cancel]") {
  TestServer s;
  ClientRequest request = Get(s.Url("/a"));
  request.cancellation = std::make_shared<Cancellation>();
  request.cancellation->Cancel();
  const Result<ClientAnswer> answer = MakeClient()->Send(request);
  REQUIRE_FALSE(answer);
  CHECK(answer.status().code() == StatusCode::kUnavailable);
  CHECK(answer.status().message() ==
        "cancelled before anything was sent to 127.0.0.1:" + std::to_string(s.port));
  CHECK(s.requests == 0);
}

TEST_CASE("a cancellation that comes after the answer changes nothing", "[net][client][cancel]") {
  TestServer s;
  auto client = MakeClient();
  ClientRequest request = Get(s.Url("/a"));
  request.cancellation = std::make_shared<Cancellation>();
  REQUIRE(client->Send(request));
  request.cancellation->Cancel();
  CHECK(request.cancellation->cancelled());
  const Result<ClientAnswer> next = client->Send(Get(s.Url("/b")));
  REQUIRE(next);
  CHECK(next->status == 200);
}

TEST_CASE("refused connections and unknown hosts are Unavailable, saying so", "[net][client]") {
  int closed_port = 0;
  { closed_port = TestServer().port; }
  auto client = MakeClient();
  Result<ClientAnswer> refused =
      client->Send(Get("http://127.0.0.1:" + std::to_string(closed_port) + "/a"));
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kUnavailable);  // never sent
  CHECK_THAT(refused.status().message(), Contains("connection refused or unreachable"));

  Result<ClientAnswer> unknown = client->Send(Get("http://no-such-host.invalid/a"));
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.status().message(), Contains("cannot resolve host 'no-such-host.invalid'"));
}

TEST_CASE("localhost reaches a server listening only on 127.0.0.1", "[net][client]") {
  TestServer s;
  Result<ClientAnswer> answer =
      MakeClient()->Send(Get("http://localhost:" + std::to_string(s.port) + "/here"));
  REQUIRE(answer);
  CHECK(answer->status == 200);
}

TEST_CASE("a long answer is cut to max_answer_bytes and the connection stays usable",
          "[net][client]") {
  TestServer s;
  auto client = MakeClient();
  ClientRequest request = Get(s.Url("/big"));
  request.max_answer_bytes = 10;
  Result<ClientAnswer> answer = client->Send(request);
  REQUIRE(answer);
  CHECK(answer->body == std::string(10, 'x'));
  CHECK(answer->body_bytes == 100'000);
  REQUIRE(client->Send(Get(s.Url("/next"))));
  CHECK(s.server.connections() == 1);
}

TEST_CASE("answers framed by the connection's end, and malformed ones", "[net][client]") {
  auto client = MakeClient();
  CannedServer until_close("HTTP/1.1 200 OK\r\n\r\nall of it", true);
  Result<ClientAnswer> framed = client->Send(Get(until_close.Url("/a")));
  REQUIRE(framed);
  CHECK(framed->body == "all of it");

  CannedServer garbage("SSH-2.0-OpenSSH\r\n\r\n", true);
  Result<ClientAnswer> malformed = client->Send(Get(garbage.Url("/a")));
  REQUIRE_FALSE(malformed);
  CHECK_THAT(malformed.status().message(), Contains("malformed answer from 127.0.0.1:"));

  CannedServer cut("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", true);
  Result<ClientAnswer> short_answer = client->Send(Get(cut.Url("/a")));
  REQUIRE_FALSE(short_answer);
  CHECK_THAT(short_answer.status().message(), Contains("malformed answer"));

  CannedServer silent("", true);
  Result<ClientAnswer> nothing = client->Send(Get(silent.Url("/a")));
  REQUIRE_FALSE(nothing);
  CHECK_THAT(nothing.status().message(), Contains("before a complete answer"));
}

TEST_CASE("a header that could smuggle another one is not sent", "[net][client]") {
  TestServer s;
  ClientRequest request = Get(s.Url("/a"));
  request.headers = {{"X-Note", "a\r\nX-Evil: 1"}};
  Result<ClientAnswer> answer = MakeClient()->Send(request);
  REQUIRE_FALSE(answer);
  CHECK(answer.status().code() == StatusCode::kInvalidArgument);
  CHECK(s.requests == 0);
}

TEST_CASE("many calls from coroutines run at once on one I/O thread", "[net][client]") {
  TestServer s;
  async::IoThreads io(1);
  io.Start();
  auto client = Client::Create();
  REQUIRE(client);
  std::vector<asio::awaitable<int>> calls;
  for (int i = 0; i < 50; ++i) {
    calls.push_back([](Client& c, std::string url) -> asio::awaitable<int> {
      Result<ClientAnswer> answer = co_await c.Send(Get(url));
      co_return answer ? answer->status : 0;
    }(**client, s.Url("/hold")));
  }
  auto statuses = asio::co_spawn(
      io.context(),
      [&]() -> asio::awaitable<std::vector<int>> {
        const asio::any_io_executor executor = co_await asio::this_coro::executor;
        co_return co_await async::AwaitAll(executor, std::move(calls));
      },
      asio::use_future);
  testing::Eventually([&] { return s.requests >= 50; }, 10s, 1ms);
  CHECK(s.requests == 50);  // all fifty wait in the server at once
  s.release.Set();
  CHECK(statuses.get() == std::vector<int>(50, 200));
  io.Stop();
}

}  // namespace
}  // namespace settle::net
