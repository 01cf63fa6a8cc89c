// settled's API with mutual TLS (docs/protocol.md §3.0): clients present certificates from
// the client CA, and a map from subjects to access levels and names says what each may do,
// beside bearer tokens. In-process settled, real sockets, a throwaway CA made with openssl.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "in_process_settled.h"
#include "test_ca.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::TestCa;

const std::string kClientToken = "mtls-client-token-0123456789";

// Clients' certificates from `ca`, a map of three of them, and a bearer token.
struct Fixture {
  Fixture()
      : ca(dir.path()),
        server(ca.IssueForLocalhost()),
        order(ca.IssueClient("order", "/O=Shop/CN=order-service")),
        alice(ca.IssueClient("alice", "/O=Shop/OU=Ops/CN=alice")),
        dashboard(ca.IssueClient("dashboard", "/O=Shop/CN=dashboard")),
        unmapped(ca.IssueClient("stranger", "/O=Shop/CN=stranger")),
        settled(
            [this](app::ServerConfig& config) {
              config.api.tls = {.cert_file = server.cert_file,
                                .key_file = server.key_file,
                                .client_ca_file = ca.ca_file()};
              REQUIRE(config.api.client_certificates
                          .AddFromText("client CN=order-service,O=Shop\n"
                                       "admin CN=alice,OU=Ops,O=Shop  # on-call\n"
                                       "read CN=dashboard,O=Shop\n")
                          .ok());
              REQUIRE(config.api.tokens.Add(api::Access::kClient, kClientToken, "billing").ok());
            },
            ca.ca_file()) {}

  JsonClient Presenting(const TestCa::Issued& cert) {
    return JsonClient(settled.port(), "127.0.0.1", ca.ca_file(), cert.cert_file, cert.key_file);
  }

  testing::TempDir dir;
  TestCa ca;
  TestCa::Issued server, order, alice, dashboard, unmapped;
  InProcessSettled settled;
};

json Tcc(const std::string& gid) { return {{"gid", gid}, {"trans_type", "tcc"}}; }

TEST_CASE(
    "a mapped client certificate acts with its level and its name: whoami, 403 beyond its "
    "level, forceStop's actor",
    "[http][tls][mtls][auth]") {
  Fixture f;
  JsonClient order = f.Presenting(f.order);
  const JsonResponse who = order.Get("/api/admin/whoami");
  INFO(who.body << who.error);
  CHECK(who.status == 200);
  CHECK(who.json ==
        json{{"access", "client"}, {"name", "order-service"}, {"authentication", true}});
  CHECK(order.PostJson("/api/settle/prepare", Tcc("m1")).status == 200);
  const JsonResponse forbidden =
      order.PostJson("/api/settle/forceStop", {{"gid", "m1"}, {"reason", "not mine to stop"}});
  CHECK(forbidden.status == 403);
  CHECK_THAT(forbidden.body, Catch::Contains("certificate") && Catch::Contains("order-service") &&
                                 Catch::Contains("needs admin"));

  JsonClient dashboard = f.Presenting(f.dashboard);
  CHECK(dashboard.Get("/api/settle/query?gid=m1").status == 200);
  const JsonResponse read_only = dashboard.PostJson("/api/settle/prepare", Tcc("m2"));
  CHECK(read_only.status == 403);
  CHECK_THAT(read_only.body, Catch::Contains("'dashboard') grants read access"));

  JsonClient alice = f.Presenting(f.alice);
  CHECK(alice.Get("/api/admin/whoami").json["name"] == "on-call");
  REQUIRE(
      alice.PostJson("/api/settle/forceStop", {{"gid", "m1"}, {"reason", "ticket OPS-7"}}).status ==
      200);
  CHECK(alice.Get("/api/settle/query?gid=m1").json["transaction"]["rollback_reason"] ==
        "stopped by an operator (forceStop by on-call): ticket OPS-7");
}

TEST_CASE(
    "a verified certificate whose subject is not mapped gets 401 saying so, and a bearer token "
    "sent with any certificate is judged alone",
    "[http][tls][mtls][auth]") {
  Fixture f;
  JsonClient stranger = f.Presenting(f.unmapped);
  const JsonResponse refused = stranger.PostJson("/api/settle/prepare", Tcc("u1"));
  CHECK(refused.status == 401);
  CHECK_THAT(refused.body, Catch::Contains("CN=stranger,O=Shop") && Catch::Contains("not mapped"));
  CHECK(stranger.Get("/api/ping").status == 200);

  stranger.SetHeader("Authorization", "Bearer " + kClientToken);
  CHECK(stranger.PostJson("/api/settle/prepare", Tcc("u1")).status == 200);
  CHECK(stranger.Get("/api/admin/whoami").json["name"] == "billing");

  JsonClient alice = f.Presenting(f.alice);
  alice.SetHeader("Authorization", "Bearer not-a-token-we-know-0000");
  CHECK(alice.PostJson("/api/settle/prepare", Tcc("u2")).status == 401);

  // Without a certificate (the server asks but does not require one): a token, or nothing.
  JsonClient anonymous(f.settled.port(), "127.0.0.1", f.ca.ca_file());
  const JsonResponse nothing = anonymous.PostJson("/api/settle/prepare", Tcc("u3"));
  CHECK(nothing.status == 401);
  CHECK_THAT(nothing.body, Catch::Contains("client certificate"));
  anonymous.SetHeader("Authorization", "Bearer " + kClientToken);
  CHECK(anonymous.PostJson("/api/settle/prepare", Tcc("u3")).status == 200);
}

TEST_CASE(
    "a client certificate from another CA or an expired one fails the handshake, and the API "
    "keeps serving",
    "[http][tls][mtls][auth]") {
  Fixture f;
  TestCa other(f.dir.path(), "other");
  for (const TestCa::Issued& bad :
       {other.IssueClient("order", "/O=Shop/CN=order-service"),
        f.ca.IssueExpiredClient("old-order", "/O=Shop/CN=order-service")}) {
    INFO(bad.cert_file);
    const JsonResponse refused = f.Presenting(bad).PostJson("/api/settle/prepare", Tcc("x"));
    CHECK(refused.status == 0);
    CHECK_THAT(refused.error, Catch::Contains("TLS handshake"));
  }
  CHECK(f.Presenting(f.order).PostJson("/api/settle/prepare", Tcc("x")).status == 200);
  CHECK(f.Presenting(f.order).Get("/api/settle/query?gid=x").json["transaction"]["status"] ==
        "prepared");
}

// A browser holding a mapped certificate sends it with every request to settled, those a page
// of another site makes included: such a request is not acted on with the certificate.
TEST_CASE("a client certificate speaks only for requests of settled's own origin",
          "[http][tls][mtls][auth]") {
  Fixture f;
  const std::string own = "https://127.0.0.1:" + std::to_string(f.settled.port());
  struct Case {
    std::string header, value;
    bool acted;
  };
  const std::vector<Case> cases = {
      {"Sec-Fetch-Site", "cross-site", false},
      {"Sec-Fetch-Site", "same-site", false},
      {"Origin", "https://evil.example", false},
      {"Origin", "null", false},
      {"Sec-Fetch-Site", "same-origin", true},
      {"Sec-Fetch-Site", "none", true},
      {"Origin", own, true},
  };
  int n = 0;
  for (const Case& c : cases) {
    INFO(c.header << ": " << c.value);
    JsonClient alice = f.Presenting(f.alice);
    alice.SetHeader(c.header, c.value);
    const std::string gid = "site-" + std::to_string(n++);
    const JsonResponse prepared = alice.PostJson("/api/settle/prepare", Tcc(gid));
    if (c.acted) {
      CHECK(prepared.status == 200);
    } else {
      CHECK(prepared.status == 403);
      CHECK_THAT(prepared.body, Catch::Contains("another site's page"));
      CHECK(
          f.Presenting(f.alice).Get("/api/settle/query?gid=" + gid).json["transaction"].is_null());
    }
  }
  // A token is no browser's to send along: it is judged whatever the site.
  JsonClient tokened = f.Presenting(f.unmapped);
  tokened.SetHeader("Sec-Fetch-Site", "cross-site");
  tokened.SetHeader("Authorization", "Bearer " + kClientToken);
  CHECK(tokened.PostJson("/api/settle/prepare", Tcc("site-token")).status == 200);
}

TEST_CASE("the console's sign-in form takes tokens, and says so when settled has none",
          "[http][tls][mtls][console]") {
  testing::TempDir dir;
  TestCa ca(dir.path());
  const TestCa::Issued server = ca.IssueForLocalhost();
  const TestCa::Issued dashboard = ca.IssueClient("dashboard", "/O=Shop/CN=dashboard");
  InProcessSettled settled(
      [&](app::ServerConfig& config) {
        config.api.tls = {.cert_file = server.cert_file,
                          .key_file = server.key_file,
                          .client_ca_file = ca.ca_file()};
        REQUIRE(config.api.client_certificates.AddFromText("read CN=dashboard,O=Shop\n").ok());
      },
      ca.ca_file(), dashboard.cert_file, dashboard.key_file);
  JsonClient anonymous(settled.port(), "127.0.0.1", ca.ca_file());
  const JsonResponse refused = anonymous.Post("/admin/login", "token=anything-0123456789abcdef",
                                              "application/x-www-form-urlencoded");
  CHECK(refused.status == 401);
  CHECK_THAT(refused.body, Catch::Contains("Sign-in takes tokens"));
  // The certificate opens the console.
  JsonClient browser(settled.port(), "127.0.0.1", ca.ca_file(), dashboard.cert_file,
                     dashboard.key_file);
  CHECK(browser.Get("/admin").status == 200);
}

}  // namespace
}  // namespace settle
