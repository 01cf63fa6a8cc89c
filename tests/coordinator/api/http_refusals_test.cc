// settled's own refusals made visible (docs/operations.md, "Refusals"): every 401 and 403 of
// the HTTP API logged once with the caller's address, the route and the reason, rate-limited,
// and counted in /api/metrics; failed TLS handshakes on the HTTPS port the same; and the
// console's session cookie, an opaque id that a stale copy of cannot hide a client
// certificate. In-process settled, real sockets, a throwaway CA made with openssl.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "eventually.h"
#include "fake_clock.h"
#include "in_process_settled.h"
#include "log_capture.h"
#include "metrics_sample.h"
#include "raw_connection.h"
#include "test_ca.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ClientWith;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::LogCapture;
using testing::SampleValue;
using testing::TestCa;

const std::string kReadToken = "refusals-read-token-aaaaaaaa";
const std::string kClientToken = "refusals-client-token-bbbbbbbb";
const std::string kAdminToken = "refusals-admin-token-cccccccc";
const std::string kForm = "application/x-www-form-urlencoded";

void WithTokens(app::ServerConfig& config) {
  REQUIRE(config.api.tokens
              .AddFromText("read " + kReadToken + "  # dashboard\n" + "client " + kClientToken +
                           "  # ci\n" + "admin " + kAdminToken + "  # on-call\n")
              .ok());
}

std::string HeaderOf(const JsonResponse& r, const std::string& name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

std::string Refusals(const std::string& port, int status, const std::string& reason) {
  return "settle_api_refusals_total{port=\"" + port + "\",status=\"" + std::to_string(status) +
         "\",reason=\"" + reason + "\"}";
}

// The session cookie's "name=value" from a sign-in's Set-Cookie.
std::string SessionCookie(const JsonResponse& signed_in) {
  const std::string set_cookie = HeaderOf(signed_in, "Set-Cookie");
  return set_cookie.substr(0, set_cookie.find(';'));
}

std::string SignIn(int port, const std::string& token) {
  const JsonResponse signed_in = JsonClient(port).Post("/admin/login", "token=" + token, kForm);
  REQUIRE(signed_in.status == 303);
  return SessionCookie(signed_in);
}

TEST_CASE(
    "each refusal of the HTTP API is logged once with the address, route and reason, never a "
    "token, and counted by port, status and reason",
    "[http][auth][refusals]") {
  LogCapture log;
  InProcessSettled s(WithTokens);
  const std::string session = SignIn(s.port(), kAdminToken);

  JsonClient anonymous(s.port());
  CHECK(anonymous.Get("/api/settle/all").status == 401);
  CHECK(ClientWith(s.port(), "unknown-token-dddddddddddd")
            .PostJson("/api/settle/prepare", {{"gid", "r1"}, {"trans_type", "tcc"}})
            .status == 401);
  CHECK(ClientWith(s.port(), kReadToken)
            .PostJson("/api/settle/prepare", {{"gid", "r1"}, {"trans_type", "tcc"}})
            .status == 403);
  JsonClient stale(s.port());
  stale.SetHeader("Cookie", "settle_session=AAAAsignedOutLongAgoAAAAAAAAAAAAAAAAAAAAAAA");
  CHECK(stale.Get("/api/settle/all").status == 401);
  JsonClient forged(s.port());  // a live session without the console's header
  forged.SetHeader("Cookie", session);
  CHECK(forged.PostJson("/api/settle/forceStop", {{"gid", "r1"}}).status == 403);

  struct Expected {
    std::string reason, line;
    int status;
  };
  const std::vector<Expected> expected = {
      {"no_credentials", "HTTP API refused GET /api/settle/all from 127.0.0.1: 401", 401},
      {"unknown_token", "HTTP API refused POST /api/settle/prepare from 127.0.0.1: 401", 401},
      {"access_too_low", "HTTP API refused POST /api/settle/prepare from 127.0.0.1: 403", 403},
      {"stale_session", "HTTP API refused GET /api/settle/all from 127.0.0.1: 401", 401},
      {"cross_site", "HTTP API refused POST /api/settle/forceStop from 127.0.0.1: 403", 403},
  };
  const std::string metrics = ClientWith(s.port(), kReadToken).Get("/api/metrics").body;
  for (const Expected& e : expected) {
    INFO(e.reason);
    const std::vector<std::string> lines = log.LinesWith("reason=" + e.reason);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Contains(e.line + " reason=" + e.reason));
    CHECK(SampleValue(metrics, Refusals("http", e.status, e.reason)) == 1);
  }
  CHECK_THAT(log.LinesWith("reason=access_too_low")[0],
             Catch::Contains("this token ('dashboard') grants read access"));
  CHECK_THAT(log.LinesWith("reason=stale_session")[0],
             Catch::Contains("console session is unknown or expired"));
  CHECK_THAT(log.LinesWith("reason=cross_site")[0], Catch::Contains("X-Settle-Console"));
  // Every series is there, zeros included, and nothing names a credential.
  CHECK(SampleValue(metrics, Refusals("http", 401, "unmapped_certificate")) == 0);
  CHECK(SampleValue(metrics, Refusals("grpc", 401, "unknown_token")) == 0);
  const std::string text = log.Text();
  for (const std::string& secret :
       {kReadToken, kClientToken, kAdminToken, std::string("unknown-token-dddddddddddd"),
        session.substr(session.find('=') + 1)}) {
    CHECK_THAT(text, !Catch::Contains(secret));
  }
}

TEST_CASE("a failed sign-in to the console is a refusal too", "[http][auth][refusals][console]") {
  LogCapture log;
  InProcessSettled s(WithTokens);
  JsonClient browser(s.port());
  CHECK(browser.Post("/admin/login", "token=guess-0123456789abcdef", kForm).status == 401);
  CHECK(browser.Post("/admin/login", "token=", kForm).status == 401);
  const std::string metrics = ClientWith(s.port(), kReadToken).Get("/api/metrics").body;
  CHECK(SampleValue(metrics, Refusals("http", 401, "unknown_token")) == 1);
  CHECK(SampleValue(metrics, Refusals("http", 401, "no_credentials")) == 1);
  CHECK(log.LinesWith("refused POST /admin/login from 127.0.0.1").size() == 2);
  CHECK_THAT(log.Text(), !Catch::Contains("guess-0123456789abcdef"));
}

TEST_CASE("a flood of 1,000 refusals logs a bounded number of lines and counts every one",
          "[http][auth][refusals]") {
  LogCapture log(5000);
  InProcessSettled s(WithTokens);
  JsonClient attacker = ClientWith(s.port(), "guessed-token-000000000000");
  for (int i = 0; i < 1000; ++i) REQUIRE(attacker.Get("/api/settle/all").status == 401);
  const std::string metrics = ClientWith(s.port(), kReadToken).Get("/api/metrics").body;
  CHECK(SampleValue(metrics, Refusals("http", 401, "unknown_token")) == 1000);
  const std::vector<std::string> lines = log.LinesWith("reason=unknown_token");
  CHECK(lines.size() == 10);
  CHECK_THAT(lines.back(), Catch::Contains("only counted for the next 60 s"));
  // Another reason is not drowned by the flood.
  CHECK(JsonClient(s.port()).Get("/api/settle/all").status == 401);
  CHECK(log.LinesWith("reason=no_credentials").size() == 1);
}

TEST_CASE(
    "the console's cookie is an opaque session id, HttpOnly, SameSite=Strict, Secure only "
    "under HTTPS",
    "[http][auth][console][session]") {
  SECTION("over HTTP") {
    InProcessSettled s(WithTokens);
    const JsonResponse signed_in =
        JsonClient(s.port()).Post("/admin/login", "token=" + kReadToken, kForm);
    REQUIRE(signed_in.status == 303);
    const std::string cookie = HeaderOf(signed_in, "Set-Cookie");
    CHECK_THAT(cookie, Catch::Matches("settle_session=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; "
                                      "SameSite=Strict; Max-Age=28800"));
    CHECK_THAT(cookie, !Catch::Contains(kReadToken) && !Catch::Contains("Secure"));
    JsonClient browser(s.port());
    browser.SetHeader("Cookie", SessionCookie(signed_in));
    CHECK(browser.Get("/api/admin/whoami").json ==
          json{{"access", "read"}, {"name", "dashboard"}, {"authentication", true}});
    // The cookie's value is no token: sent as a bearer token it is unknown.
    JsonClient bearer = ClientWith(s.port(), SessionCookie(signed_in).substr(15));
    CHECK(bearer.Get("/api/settle/all").status == 401);
  }
  SECTION("over HTTPS") {
    testing::TempDir dir;
    TestCa ca(dir.path());
    const TestCa::Issued server = ca.IssueForLocalhost();
    InProcessSettled s(
        [&](app::ServerConfig& config) {
          WithTokens(config);
          config.api.tls = {.cert_file = server.cert_file, .key_file = server.key_file};
        },
        ca.ca_file());
    JsonClient browser(s.port(), "127.0.0.1", ca.ca_file());
    const JsonResponse signed_in = browser.Post("/admin/login", "token=" + kAdminToken, kForm);
    REQUIRE(signed_in.status == 303);
    CHECK_THAT(HeaderOf(signed_in, "Set-Cookie"),
               Catch::Matches("settle_session=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; "
                              "SameSite=Strict; Secure; Max-Age=28800"));
    browser.SetHeader("Cookie", SessionCookie(signed_in));
    CHECK(browser.Get("/api/admin/whoami").json["name"] == "on-call");
    const JsonResponse signed_out = browser.Post("/admin/logout", "", kForm);
    CHECK_THAT(HeaderOf(signed_out, "Set-Cookie"),
               Catch::Matches("settle_session=; Path=/; HttpOnly; SameSite=Strict; Secure; "
                              "Max-Age=0"));
  }
}

TEST_CASE("a session is not accepted after sign-out, nor once its lifetime has passed",
          "[http][auth][console][session]") {
  testing::FakeClock clock;
  InProcessSettled s(
      [](app::ServerConfig& config) {
        WithTokens(config);
        config.api.console_sessions.lifetime = Duration(3'600'000);
      },
      "", "", "", &clock);

  JsonClient browser(s.port());
  browser.SetHeader("Cookie", SignIn(s.port(), kAdminToken));
  REQUIRE(browser.Get("/api/settle/all").status == 200);
  REQUIRE(browser.Post("/admin/logout", "", kForm).status == 303);
  const JsonResponse after_sign_out = browser.Get("/api/settle/all");
  CHECK(after_sign_out.status == 401);
  CHECK_THAT(after_sign_out.body, Catch::Contains("console session is unknown or expired"));

  JsonClient other(s.port());
  other.SetHeader("Cookie", SignIn(s.port(), kReadToken));
  clock.Advance(Duration(3'599'000));
  CHECK(other.Get("/api/settle/all").status == 200);
  clock.Advance(Duration(1'000));
  const JsonResponse expired = other.Get("/api/settle/all");
  CHECK(expired.status == 401);
  CHECK_THAT(expired.body, Catch::Contains("console session is unknown or expired") &&
                               Catch::Contains("sign in again"));
  const JsonResponse page = other.Get("/admin");
  CHECK(page.status == 401);
  CHECK_THAT(page.body, Catch::Contains("Your console session is unknown or expired"));
}

TEST_CASE(
    "a request's credentials are judged once, from its head: a session signed out while its body "
    "arrives is served as its head was granted, and the next request is refused",
    "[http][auth][console][session]") {
  InProcessSettled s(WithTokens);
  const std::string cookie = SignIn(s.port(), kClientToken);
  const std::string body = R"({"gid":"judged-once","trans_type":"tcc"})";
  testing::RawConnection c(s.port());
  REQUIRE(c.Send("POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nCookie: " + cookie +
                 "\r\nX-Settle-Console: 1\r\nContent-Type: application/json\r\n"
                 "Expect: 100-continue\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n"));
  // The 100 comes once the head has been judged and let through.
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  REQUIRE(c.ReadBytes(interim.size()) == interim);
  JsonClient browser(s.port());
  browser.SetHeader("Cookie", cookie);
  browser.SetHeader("X-Settle-Console", "1");
  REQUIRE(browser.Post("/admin/logout", "", kForm).status == 303);
  REQUIRE(browser.Get("/api/settle/all").status == 401);

  REQUIRE(c.Send(body));
  const testing::RawConnection::Answer answer = c.Read();
  INFO(answer.body);
  CHECK(answer.status == 200);
  JsonClient admin = ClientWith(s.port(), kAdminToken);
  const JsonResponse stored = admin.Get("/api/settle/query?gid=judged-once");
  CHECK(stored.json["transaction"]["status"] == "prepared");
  // A refused request was counted once: the sign-out's GET, not the prepare.
  CHECK(SampleValue(admin.Get("/api/metrics").body, Refusals("http", 401, "stale_session")) == 1);

  // The connection's next request is judged by its own head: the session is gone.
  REQUIRE(c.Send("POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nCookie: " + cookie +
                 "\r\nX-Settle-Console: 1\r\nContent-Type: application/json\r\n"
                 "Content-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body));
  CHECK(c.Read().status == 401);
}

// HTTPS with a client CA and a map of subjects, beside tokens.
struct CertificateFixture {
  explicit CertificateFixture(bool require_certificate = false)
      : ca(dir.path()),
        server(ca.IssueForLocalhost()),
        order(ca.IssueClient("order", "/O=Shop/CN=order-service")),
        dashboard(ca.IssueClient("dashboard", "/O=Shop/CN=dashboard")),
        stranger(ca.IssueClient("stranger", "/O=Shop/CN=stranger")),
        settled(
            [&](app::ServerConfig& config) {
              config.api.tls = {.cert_file = server.cert_file,
                                .key_file = server.key_file,
                                .client_ca_file = ca.ca_file(),
                                .require_client_certificate = require_certificate};
              REQUIRE(config.api.client_certificates
                          .AddFromText("client CN=order-service,O=Shop\n"
                                       "read CN=dashboard,O=Shop\n")
                          .ok());
              WithTokens(config);
            },
            ca.ca_file(), dashboard.cert_file, dashboard.key_file) {}

  JsonClient Presenting(const TestCa::Issued& cert) {
    return JsonClient(settled.port(), "127.0.0.1", ca.ca_file(), cert.cert_file, cert.key_file);
  }
  std::string Metrics() {
    const JsonResponse metrics = settled.client().Get("/api/metrics");
    INFO(metrics.status << " " << metrics.error << " " << metrics.body.substr(0, 300));
    REQUIRE(metrics.status == 200);
    return metrics.body;
  }

  testing::TempDir dir;
  TestCa ca;
  TestCa::Issued server, order, dashboard, stranger;
  InProcessSettled settled;
};

TEST_CASE(
    "a stale session cookie does not hide a mapped client certificate, and alone gets a 401 "
    "that names the session",
    "[http][tls][mtls][auth][console][session]") {
  LogCapture log;
  CertificateFixture f;
  const std::string stale = "settle_session=staleFromBeforeARestartAAAAAAAAAAAAAAAAAAAAAA";

  JsonClient order = f.Presenting(f.order);
  order.SetHeader("Cookie", stale);
  CHECK(order.Get("/api/admin/whoami").json["name"] == "order-service");
  CHECK(order.PostJson("/api/settle/prepare", {{"gid", "c1"}, {"trans_type", "tcc"}}).status ==
        200);
  CHECK(f.settled.client().Get("/api/settle/query?gid=c1").json["transaction"]["status"] ==
        "prepared");

  JsonClient bare(f.settled.port(), "127.0.0.1", f.ca.ca_file());
  bare.SetHeader("Cookie", stale);
  const JsonResponse alone = bare.Get("/api/settle/all");
  CHECK(alone.status == 401);
  CHECK_THAT(alone.body, Catch::Contains("console session is unknown or expired") &&
                             Catch::Contains("sign in again"));

  JsonClient stranger = f.Presenting(f.stranger);
  stranger.SetHeader("Cookie", stale);
  const JsonResponse unmapped = stranger.Get("/api/settle/all");
  CHECK(unmapped.status == 401);
  CHECK_THAT(unmapped.body, Catch::Contains("console session is unknown or expired") &&
                                Catch::Contains("'CN=stranger,O=Shop' is not mapped"));
  // Beyond the certificate's level the 403 names the certificate, and the stale cookie.
  JsonClient dashboard = f.Presenting(f.dashboard);
  dashboard.SetHeader("Cookie", stale);
  const JsonResponse too_low =
      dashboard.PostJson("/api/settle/prepare", {{"gid", "c2"}, {"trans_type", "tcc"}});
  CHECK(too_low.status == 403);
  CHECK_THAT(too_low.body, Catch::Contains("this certificate ('dashboard') grants read") &&
                               Catch::Contains("session cookie sent along is unknown"));

  const std::string metrics = f.Metrics();
  CHECK(SampleValue(metrics, Refusals("http", 401, "stale_session")) == 2);
  CHECK(SampleValue(metrics, Refusals("http", 403, "access_too_low")) == 1);
}

TEST_CASE(
    "refusals of certificates are logged and counted: an unmapped subject, a browser's "
    "cross-site request",
    "[http][tls][mtls][auth][refusals]") {
  LogCapture log;
  CertificateFixture f;
  CHECK(f.Presenting(f.stranger).Get("/api/settle/all").status == 401);
  JsonClient order = f.Presenting(f.order);
  order.SetHeader("Sec-Fetch-Site", "cross-site");
  CHECK(order.PostJson("/api/settle/prepare", {{"gid", "x1"}, {"trans_type", "tcc"}}).status ==
        403);
  const std::string metrics = f.Metrics();
  CHECK(SampleValue(metrics, Refusals("http", 401, "unmapped_certificate")) == 1);
  CHECK(SampleValue(metrics, Refusals("http", 403, "cross_site")) == 1);
  const std::vector<std::string> unmapped = log.LinesWith("reason=unmapped_certificate");
  REQUIRE(unmapped.size() == 1);
  CHECK_THAT(unmapped[0], Catch::Contains("GET /api/settle/all from 127.0.0.1: 401") &&
                              Catch::Contains("CN=stranger,O=Shop"));
  const std::vector<std::string> cross_site = log.LinesWith("reason=cross_site");
  REQUIRE(cross_site.size() == 1);
  CHECK_THAT(cross_site[0], Catch::Contains("POST /api/settle/prepare from 127.0.0.1: 403"));
}

TEST_CASE(
    "failed TLS handshakes on the HTTPS port are logged with the peer and OpenSSL's reason, and "
    "counted, but not a bare TCP connection",
    "[http][tls][mtls][refusals]") {
  LogCapture log;
  CertificateFixture f(/*require_certificate=*/true);
  TestCa other(f.dir.path(), "other");
  const TestCa::Issued foreign = other.IssueClient("foreign", "/O=Shop/CN=order-service");
  const TestCa::Issued expired = f.ca.IssueExpiredClient("expired", "/O=Shop/CN=order-service");
  auto failures = [&] {
    return SampleValue(f.Metrics(), "settle_tls_handshake_failures_total{port=\"http\"}");
  };
  REQUIRE(failures() == 0);

  // A TCP health check: connects, sends nothing, closes.
  { testing::RawConnection probe(f.settled.port()); }

  struct Case {
    std::string what, logged;
    std::function<int()> attempt;  // the HTTP status the client got (0: none)
  };
  const std::vector<Case> cases = {
      {"no client certificate", "peer did not return a certificate",
       [&] {
         return JsonClient(f.settled.port(), "127.0.0.1", f.ca.ca_file()).Get("/api/ping").status;
       }},
      {"a certificate from another CA", "certificate verify failed",
       [&] { return f.Presenting(foreign).Get("/api/ping").status; }},
      {"an expired certificate", "certificate has expired",
       [&] { return f.Presenting(expired).Get("/api/ping").status; }},
      {"a client that does not trust settled's certificate", "alert unknown ca",
       [&] {
         return JsonClient(f.settled.port(), "127.0.0.1", other.ca_file(), f.order.cert_file,
                           f.order.key_file)
             .Get("/api/ping")
             .status;
       }},
      {"plain HTTP on the TLS port", "http request",
       [&] {
         testing::RawConnection plain(f.settled.port());
         plain.Send("GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n");
         return plain.Read(std::chrono::seconds(5)).status;
       }},
  };
  double expected = 0;
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(c.attempt() == 0);
    ++expected;
    CHECK(testing::Eventually([&] { return failures() >= expected; }));
    CHECK(failures() == expected);
    const std::vector<std::string> lines = log.LinesWith(c.logged);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Contains("HTTP API: TLS handshake from 127.0.0.1 failed: "));
  }
  CHECK(log.LinesWith("TLS handshake from").size() == cases.size());
  // And the port keeps serving.
  CHECK(f.Presenting(f.order).Get("/api/ping").status == 200);
}

}  // namespace
}  // namespace settle
