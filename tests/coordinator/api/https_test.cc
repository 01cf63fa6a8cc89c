// HTTPS end to end: settled serves its API with --tls-cert/--tls-key, calls https://
// participants and webhooks, verifies them against --ca-file, and presents --tls-client-cert to
// a webhook that requires a client certificate. A throwaway CA is made with openssl while the
// test runs.
#include <catch2/catch.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "eventually.h"
#include "in_process_settled.h"
#include "metrics_sample.h"
#include "participant_server.h"
#include "raw_connection.h"
#include "settle/sdk/participant.h"
#include "test_ca.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::ParticipantServer;

json Saga(const std::string& gid, const ParticipantServer& p, const std::string& action) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"wait_result", true},
          {"steps", {{{"action", p.Url(action)}, {"compensate", p.Url("/compensate")}}}},
          {"payloads", {R"({"amount":30})"}}};
}

TEST_CASE("settled serves HTTPS and calls https:// participants and webhooks it can verify",
          "[http][tls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  ParticipantServer participant(cert.cert_file, cert.key_file);
  participant.SetDefault("/down", {503, "down"});
  ParticipantServer webhook(cert.cert_file, cert.key_file);
  InProcessSettled s(
      [&](app::ServerConfig& config) {
        config.api.tls = {cert.cert_file, cert.key_file};
        config.ca_file = ca.ca_file();
        config.alert_webhook = webhook.Url("/hooks/settle");
      },
      ca.ca_file());

  // The API over TLS, the branch call over TLS.
  const auto done = s.Call("submit", Saga("secure", participant, "/action"));
  INFO(done.body);
  CHECK(done.status == 200);
  CHECK(s.StatusOf("secure") == "succeed");
  REQUIRE(participant.CallsTo("/action").size() == 1);
  CHECK(participant.CallsTo("/action")[0].query.at("gid") == "secure");

  // The stuck alert over TLS.
  json stuck = Saga("stuck", participant, "/down");
  stuck["wait_result"] = false;
  REQUIRE(s.Call("submit", stuck).status == 200);
  REQUIRE(webhook.WaitForCalls("/hooks/settle", 1));
  CHECK(json::parse(webhook.CallsTo("/hooks/settle")[0].body)["gid"] == "stuck");

  // Plain HTTP to the HTTPS port gets no answer.
  testing::RawConnection plain(s.port());
  REQUIRE(plain.Send("GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(plain.Read().status == 0);
}

TEST_CASE(
    "a participant whose certificate settled cannot verify is never sent the call, the "
    "branch says why",
    "[http][tls]") {
  testing::TempDir dir;
  testing::TestCa trusted(dir.path(), "trusted");
  testing::TestCa stranger(dir.path(), "stranger");
  const testing::TestCa::Issued foreign = stranger.IssueForLocalhost();
  ParticipantServer impostor(foreign.cert_file, foreign.key_file);
  InProcessSettled s([&](app::ServerConfig& config) { config.ca_file = trusted.ca_file(); });

  json saga = Saga("unverified", impostor, "/action");
  saga["wait_result"] = false;
  REQUIRE(s.Call("submit", saga).status == 200);
  REQUIRE(s.WaitUntil("unverified", [](const json& q) {
    return q.is_object() && q["branches"].is_array() && !q["branches"].empty() &&
           q["branches"][0]["attempts"].get<int>() >= 1;
  }));
  const json branch = s.Query("unverified")["branches"][0];
  CHECK_THAT(branch["last_error"].get<std::string>(), Catch::Contains("TLS handshake"));
  CHECK(impostor.Calls().empty());  // no request was sent to it
  CHECK(s.StatusOf("unverified") == "submitted");
}

// An alert webhook served over HTTPS (the SDK's participant server) that requires a client
// certificate from `clients`: a caller without one is refused at the handshake, before the
// route runs. Records the body of every alert POSTed to /hooks/settle.
class MtlsWebhook {
 public:
  MtlsWebhook(const testing::TestCa::Issued& cert, const testing::TestCa& clients)
      : server_(sdk::ParticipantOptions{.threads = 1,
                                        .io_threads = 1,
                                        .tls_cert_file = cert.cert_file,
                                        .tls_key_file = cert.key_file,
                                        .tls_client_ca_file = clients.ca_file()}) {
    server_.OnPost("/hooks/settle", [this](const sdk::HttpRequest& request) {
      std::lock_guard lock(mu_);
      alerts_.push_back(request.body);
      return sdk::HttpReply{.body = "{}"};
    });
    auto port = server_.Start("127.0.0.1", 0);
    REQUIRE(port);
    url_ = "https://127.0.0.1:" + std::to_string(*port) + "/hooks/settle";
  }
  const std::string& url() const { return url_; }
  std::vector<std::string> alerts() const {
    std::lock_guard lock(mu_);
    return alerts_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> alerts_;
  std::string url_;
  sdk::Participant server_;  // last: stops serving before what its route touches goes away
};

// settle_alerts_total{result="..."} as settled's metrics say now.
double Alerts(InProcessSettled& s, const std::string& result) {
  return testing::SampleValue(s.client().Get("/api/metrics").body,
                              "settle_alerts_total{result=\"" + result + "\"}");
}

TEST_CASE(
    "settled presents --tls-client-cert to an alert webhook that requires a client "
    "certificate, and without one the alert is refused at the handshake and counted as failed",
    "[http][tls][mtls][alerts]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  testing::TestCa clients(dir.path(), "clients");
  const testing::TestCa::Issued settled_cert = clients.IssueClient("settled", "/O=Shop/CN=settled");
  MtlsWebhook webhook(ca.IssueForLocalhost(), clients);
  ParticipantServer participant;
  participant.SetDefault("/down", {503, "down"});  // stuck after 3 failures
  json stuck = Saga("stuck", participant, "/down");
  stuck["wait_result"] = false;

  {
    InProcessSettled s([&](app::ServerConfig& config) {
      config.ca_file = ca.ca_file();
      config.tls_client_cert = settled_cert.cert_file;
      config.tls_client_key = settled_cert.key_file;
      config.alert_webhook = webhook.url();
    });
    REQUIRE(s.Call("submit", stuck).status == 200);
    REQUIRE(testing::Eventually([&] { return webhook.alerts().size() == 1; }));
    const json alert = json::parse(webhook.alerts().at(0));
    CHECK(alert["event"] == "transaction_stuck");
    CHECK(alert["gid"] == "stuck");
    // Counted once settled has read the webhook's answer, a moment after the webhook got it.
    CHECK(testing::Eventually([&] { return Alerts(s, "sent") == 1; }));
    CHECK(Alerts(s, "failed") == 0);
  }

  InProcessSettled without([&](app::ServerConfig& config) {
    config.ca_file = ca.ca_file();
    config.alert_webhook = webhook.url();
  });
  stuck["gid"] = "stuck-unalerted";
  REQUIRE(without.Call("submit", stuck).status == 200);
  REQUIRE(without.WaitUntil("stuck-unalerted", [](const json& q) {
    return q.is_object() && q["branches"].is_array() && !q["branches"].empty() &&
           q["branches"][0]["failures"].get<int>() >= 3;
  }));
  // Each of its attempts (3, a second and then two apart) ends at the handshake.
  CHECK(testing::Eventually([&] { return Alerts(without, "failed") == 1; },
                            std::chrono::seconds(30)));
  CHECK(Alerts(without, "sent") == 0);
  CHECK(webhook.alerts().size() == 1);  // the first settled's alert only
}

}  // namespace
}  // namespace settle
