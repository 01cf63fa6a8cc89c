// HTTPS end to end: settled serves its API with --tls-cert/--tls-key, calls https://
// participants and webhooks, and verifies them against --ca-file. A throwaway CA is made with
// openssl while the test runs.
#include <catch2/catch.hpp>

#include <string>

#include "in_process_settled.h"
#include "participant_server.h"
#include "raw_connection.h"
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

}  // namespace
}  // namespace settle
