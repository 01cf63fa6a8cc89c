// net::Server's on_handshake_failure: each TLS handshake that fails is told, with the peer's
// address and OpenSSL's reason, and nothing else is. Real sockets on 127.0.0.1, a throwaway
// CA made with openssl.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "eventually.h"
#include "raw_connection.h"
#include "settle/async/io_threads.h"
#include "settle/net/blocking_client.h"
#include "settle/net/server.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::net {
namespace {

using Catch::Matchers::Contains;
using testing::RawConnection;
using testing::TestCa;

// An HTTPS server requiring client certificates from `ca`, answering 200 to anything, that
// keeps what on_handshake_failure is told.
struct ReportingServer {
  ReportingServer(const TestCa& ca, const TestCa::Issued& cert, Duration io_timeout)
      : io(2),
        server(io.context(),
               ServerOptions{.io_timeout = io_timeout,
                             .tls = {.cert_file = cert.cert_file,
                                     .key_file = cert.key_file,
                                     .client_ca_file = ca.ca_file(),
                                     .require_client_certificate = true},
                             .on_handshake_failure =
                                 [this](const HandshakeFailure& failure) {
                                   std::lock_guard lock(mutex);
                                   failures.push_back(failure);
                                 }},
               [](Request&) -> asio::awaitable<Response> {
                 co_return Response{200, "text/plain", "ok"};
               }) {
    io.Start();
    Result<int> started = server.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
  }
  ~ReportingServer() {
    server.Stop();
    io.Stop();
  }

  std::vector<HandshakeFailure> Failures() {
    std::lock_guard lock(mutex);
    return failures;
  }
  // Waits (with a deadline) until `count` failures were told; returns them.
  std::vector<HandshakeFailure> WaitFor(std::size_t count) {
    testing::Eventually([&] { return Failures().size() >= count; });
    return Failures();
  }

  async::IoThreads io;
  Server server;
  int port = 0;
  std::mutex mutex;
  std::vector<HandshakeFailure> failures;  // guarded by mutex
};

Result<ClientAnswer> Get(int port, const std::string& ca_file, const TestCa::Issued& presented) {
  auto client = BlockingClient::Create({.ca_file = ca_file,
                                        .client_cert_file = presented.cert_file,
                                        .client_key_file = presented.key_file});
  REQUIRE(client);
  ClientRequest request;
  request.url = *ParseUrl("https://localhost:" + std::to_string(port) + "/x");
  return (*client)->Send(request);
}

TEST_CASE(
    "each failed TLS handshake is told with the peer's address and OpenSSL's reason, and a good "
    "handshake or a bare TCP connection is not",
    "[net][server][tls][mtls]") {
  testing::TempDir dir;
  TestCa ca(dir.path());
  TestCa other(dir.path(), "other");
  const TestCa::Issued cert = ca.IssueForLocalhost();
  ReportingServer s(ca, cert, Duration(10'000));
  const TestCa::Issued good = ca.IssueClient("good", "/O=Shop/CN=order-service");

  REQUIRE(Get(s.port, ca.ca_file(), good));
  { RawConnection probe(s.port); }  // connects, sends nothing, closes

  struct Case {
    const char* what;
    std::string reason;
    std::function<void()> attempt;
  };
  const std::vector<Case> cases = {
      {"no certificate", "peer did not return a certificate",
       [&] { CHECK_FALSE(Get(s.port, ca.ca_file(), {})); }},
      {"another CA's", "certificate verify failed: unable to get local issuer certificate",
       [&] { CHECK_FALSE(Get(s.port, ca.ca_file(), other.IssueClient("x", "/O=Shop/CN=x"))); }},
      {"expired", "certificate verify failed: certificate has expired",
       [&] { CHECK_FALSE(Get(s.port, ca.ca_file(), ca.IssueExpiredClient("old", "/CN=old"))); }},
      {"a client that does not trust the server", "alert unknown ca",
       [&] { CHECK_FALSE(Get(s.port, other.ca_file(), good)); }},
      {"plain HTTP", "http request",
       [&] {
         RawConnection plain(s.port);
         REQUIRE(plain.Send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
         CHECK(plain.Read().status == 0);
       }},
  };
  std::size_t told = 0;
  for (const Case& c : cases) {
    INFO(c.what);
    c.attempt();
    const std::vector<HandshakeFailure> failures = s.WaitFor(++told);
    REQUIRE(failures.size() == told);
    CHECK(failures.back().address == "127.0.0.1");
    CHECK(failures.back().port > 0);
    CHECK_THAT(failures.back().reason, Contains(c.reason));
  }
  REQUIRE(Get(s.port, ca.ca_file(), good));
  CHECK(s.Failures().size() == cases.size());
}

TEST_CASE("a handshake that stalls past io_timeout is told as timed out", "[net][server][tls]") {
  testing::TempDir dir;
  TestCa ca(dir.path());
  ReportingServer s(ca, ca.IssueForLocalhost(), Duration(200));
  RawConnection stalled(s.port);
  REQUIRE(stalled.Send(std::string("\x16\x03\x01", 3)));  // the start of a TLS record, no more
  const std::vector<HandshakeFailure> failures = s.WaitFor(1);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].reason == "timed out after 200 ms");
  CHECK(stalled.ClosedWithin());
}

}  // namespace
}  // namespace settle::net
