// Mutual TLS end to end (issue 35, item 3): a participant that requires client certificates
// from a CA refuses every other caller at the handshake, before its barrier or business code
// runs; the real settled presents its certificate (--tls-client-cert) to reach it; settled's
// own API takes certificates beside tokens (--tls-client-ca, --client-certificates) or
// instead of them (--require-client-cert). A throwaway CA is made with openssl.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "eventually.h"
#include "json_client.h"
#include "sdk_bank.h"
#include "sdk_test_support.h"
#include "settle/net/blocking_client.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"
#include "settled_process.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::sdk {
namespace {

using settle::testing::JsonClient;
using settle::testing::SdkBank;
using settle::testing::SettledProcess;
using settle::testing::TempDir;
using settle::testing::TestCa;
using namespace settle::sdk::test;

constexpr const char* kTransferFrom1 = R"({"account_id":"1","amount":30})";
constexpr const char* kTransferTo2 = R"({"account_id":"2","amount":30})";

// A bank served over HTTPS that requires client certificates from `ca`.
ParticipantOptions RequiringClientCertificates(const TestCa& ca) {
  const TestCa::Issued server = ca.IssueForLocalhost();
  return ParticipantOptions{.threads = 2,
                            .io_threads = 1,
                            .tls_cert_file = server.cert_file,
                            .tls_key_file = server.key_file,
                            .tls_client_ca_file = ca.ca_file()};
}

// POSTs a saga action to the bank, as a forger with `presented` (none when empty) would.
Result<net::ClientAnswer> CallDirectly(const SdkBank& bank, const TestCa& ca,
                                       const std::string& gid,
                                       const TestCa::Issued& presented = {}) {
  auto client = net::BlockingClient::Create({.ca_file = ca.ca_file(),
                                             .client_cert_file = presented.cert_file,
                                             .client_key_file = presented.key_file});
  REQUIRE(client);
  net::ClientRequest request;
  request.method = "POST";
  request.url =
      *ParseUrl(bank.Url("/TransIn?gid=" + gid + "&trans_type=saga&branch_id=01&op=action"));
  request.body = R"({"account_id":"1","amount":1000000})";
  return (*client)->Send(std::move(request));
}

TEST_CASE(
    "a participant that requires client certificates refuses none, another CA's and an "
    "expired one at the handshake, writing nothing, and keeps serving good ones",
    "[sdk][tls][mtls]") {
  TempDir dir;
  TestCa ca(dir.path());
  TestCa other(dir.path(), "other");
  SdkBank bank(dir.File("bank.db"), 2, 1000, RequiringClientCertificates(ca));

  struct Refused {
    const char* what;
    TestCa::Issued presented;
  };
  for (const Refused& refused :
       {Refused{"no certificate", {}},
        Refused{"another CA's", other.IssueClient("settled", "/O=Shop/CN=settled")},
        Refused{"expired", ca.IssueExpiredClient("old", "/O=Shop/CN=settled")}}) {
    INFO(refused.what);
    Result<net::ClientAnswer> answer = CallDirectly(bank, ca, "forged-1", refused.presented);
    REQUIRE_FALSE(answer);
    CHECK(answer.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(answer.status().message(), Catch::Contains("TLS handshake"));
    CHECK(bank.BarrierRows() == 0);
    CHECK(bank.Balance("1") == 1000);
  }

  Result<net::ClientAnswer> accepted =
      CallDirectly(bank, ca, "good-1", ca.IssueClient("settled", "/O=Shop/CN=settled"));
  REQUIRE(accepted);
  CHECK(accepted->status == 200);
  CHECK(bank.Balance("1") == 1001000);
  CHECK(bank.BarrierRows() == 1);
}

TEST_CASE(
    "settled with --tls-client-cert completes a saga and a TCC on a participant that "
    "requires client certificates, and without it the branch says the handshake failed",
    "[sdk][tls][mtls][process]") {
  TempDir dir;
  TestCa ca(dir.path());
  SdkBank bank(dir.File("bank.db"), 2, 1000, RequiringClientCertificates(ca));
  const TestCa::Issued settled_cert = ca.IssueClient("settled", "/O=Shop/CN=settled");
  // Trys come from the initiator, which needs a certificate of its own.
  const TestCa::Issued initiator_cert = ca.IssueClient("orders", "/O=Shop/CN=order-service");
  ClientOptions client_options{.ca_file = ca.ca_file(),
                               .client_cert_file = initiator_cert.cert_file,
                               .client_key_file = initiator_cert.key_file};

  {
    SettledProcess settled(dir.File("settle.db"),
                           {"--ca-file", ca.ca_file(), "--tls-client-cert", settled_cert.cert_file,
                            "--tls-client-key", settled_cert.key_file});
    auto client = MakeClient("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle",
                             client_options);

    Saga saga(*client, "mtls-saga");
    saga.Add(bank.Url("/TransOut"), bank.Url("/TransOutCompensate"), kTransferFrom1)
        .Add(bank.Url("/TransIn"), bank.Url("/TransInCompensate"), kTransferTo2);
    saga.options().wait_result = true;
    auto submitted = saga.Submit();
    REQUIRE(submitted);
    CHECK(submitted->status == GlobalStatus::kSucceed);
    CHECK(bank.Balance("1") == 970);
    CHECK(bank.Balance("2") == 1030);

    TransOptions wait;
    wait.wait_result = true;
    auto tcc = RunTcc(*client, "mtls-tcc", wait, [&](Tcc& t) {
      auto out = t.CallBranch(kTransferFrom1, bank.Url("/TransOutTry"),
                              bank.Url("/TransOutConfirm"), bank.Url("/TransOutCancel"));
      if (!out) return out.status();
      auto in = t.CallBranch(kTransferTo2, bank.Url("/TransInTry"), bank.Url("/TransInConfirm"),
                             bank.Url("/TransInCancel"));
      return in ? Status::Ok() : in.status();
    });
    REQUIRE(tcc);
    CHECK(tcc->status == GlobalStatus::kSucceed);
    CHECK(bank.Balance("1") == 940);
    CHECK(bank.Balance("2") == 1060);
    CHECK(bank.Frozen("1") == 0);
  }

  const std::int64_t rows = bank.BarrierRows();
  SettledProcess without(dir.File("settle-2.db"), {"--ca-file", ca.ca_file()});
  auto client = MakeClient("http://127.0.0.1:" + std::to_string(without.port()) + "/api/settle",
                           client_options);
  Saga saga(*client, "no-client-cert");
  saga.Add(bank.Url("/TransOut"), bank.Url("/TransOutCompensate"), kTransferFrom1);
  REQUIRE(saga.Submit());
  std::string last_error;
  CHECK(settle::testing::Eventually(
      [&] {
        auto tx = client->Query("no-client-cert");
        if (!tx.ok() || !tx->has_value() || (*tx)->branches.empty()) return false;
        for (const BranchInfo& branch : (*tx)->branches) {
          if (!branch.last_error.empty()) last_error = branch.last_error;
        }
        return !last_error.empty();
      },
      std::chrono::seconds(15), std::chrono::milliseconds(20)));
  CHECK_THAT(last_error, Catch::Contains("TLS handshake"));
  CHECK(bank.BarrierRows() == rows);
  CHECK(bank.Balance("1") == 940);
}

// settled serving its API over HTTPS with a client CA, a subject map and a token.
struct CertificateApi {
  CertificateApi(std::vector<std::string> more_args = {})
      : ca(dir.path()),
        server(ca.IssueForLocalhost()),
        order(ca.IssueClient("order", "/O=Shop/CN=order-service")),
        dashboard(ca.IssueClient("dashboard", "/O=Shop/CN=dashboard")),
        stranger(ca.IssueClient("stranger", "/O=Shop/CN=stranger")),
        settled(dir.File("settle.db"), Args(std::move(more_args))) {}

  std::vector<std::string> Args(std::vector<std::string> more) {
    std::ofstream(dir.File("subjects")) << "client CN=order-service,O=Shop\n"
                                           "read   CN=dashboard,O=Shop   # grafana\n";
    std::vector<std::string> args = {"--tls-cert",
                                     server.cert_file,
                                     "--tls-key",
                                     server.key_file,
                                     "--tls-client-ca",
                                     ca.ca_file(),
                                     "--client-certificates",
                                     dir.File("subjects"),
                                     "--client-token",
                                     kToken};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  JsonClient Presenting(const TestCa::Issued& cert = {}) {
    return JsonClient(settled.port(), "127.0.0.1", ca.ca_file(), cert.cert_file, cert.key_file);
  }

  static constexpr const char* kToken = "billing-client-token-0123456789";
  TempDir dir;
  TestCa ca;
  TestCa::Issued server, order, dashboard, stranger;
  SettledProcess settled;
};

const nlohmann::json kPrepare = {{"gid", "api-1"}, {"trans_type", "tcc"}};

TEST_CASE(
    "settled's API maps client certificates to levels and names beside bearer tokens: a "
    "mapped one acts under its name, an unmapped one gets 401, a read one 403 on prepare",
    "[sdk][tls][mtls][process][auth]") {
  CertificateApi api;
  JsonClient order = api.Presenting(api.order);
  const auto who = order.Get("/api/admin/whoami");
  INFO(who.body << who.error);
  CHECK(who.json ==
        nlohmann::json{{"access", "client"}, {"name", "order-service"}, {"authentication", true}});
  CHECK(order.PostJson("/api/settle/prepare", kPrepare).status == 200);

  JsonClient dashboard = api.Presenting(api.dashboard);
  CHECK(dashboard.Get("/api/admin/whoami").json["name"] == "grafana");
  CHECK(dashboard.Get("/api/settle/query?gid=api-1").status == 200);
  const auto read_only =
      dashboard.PostJson("/api/settle/prepare", {{"gid", "api-2"}, {"trans_type", "tcc"}});
  CHECK(read_only.status == 403);
  CHECK_THAT(read_only.body, Catch::Contains("grafana") && Catch::Contains("needs client"));

  const auto unmapped = api.Presenting(api.stranger).Get("/api/settle/query?gid=api-1");
  CHECK(unmapped.status == 401);
  CHECK_THAT(unmapped.body, Catch::Contains("CN=stranger,O=Shop") && Catch::Contains("not mapped"));

  // A bearer token still works, with no certificate at all.
  JsonClient billing = api.Presenting();
  billing.SetHeader("Authorization", std::string("Bearer ") + CertificateApi::kToken);
  CHECK(billing.Get("/api/admin/whoami").json["name"] == "client-token-1");
  CHECK(billing.PostJson("/api/settle/prepare", {{"gid", "api-3"}, {"trans_type", "tcc"}}).status ==
        200);

  // Another CA's or an expired certificate: refused at the handshake; settled keeps serving.
  TestCa other(api.dir.path(), "other");
  for (const TestCa::Issued& bad :
       {other.IssueClient("order", "/O=Shop/CN=order-service"),
        api.ca.IssueExpiredClient("old-order", "/O=Shop/CN=order-service")}) {
    const auto refused = api.Presenting(bad).Get("/api/settle/query?gid=api-1");
    CHECK(refused.status == 0);
    CHECK_THAT(refused.error, Catch::Contains("TLS handshake"));
  }
  CHECK(order.Get("/api/settle/query?gid=api-1").status == 200);
}

TEST_CASE(
    "with --require-client-cert settled refuses a connection without a certificate at the "
    "handshake, even one bearing a token",
    "[sdk][tls][mtls][process][auth]") {
  CertificateApi api({"--require-client-cert"});
  JsonClient billing = api.Presenting();
  billing.SetHeader("Authorization", std::string("Bearer ") + CertificateApi::kToken);
  const auto refused = billing.Get("/api/settle/query?gid=x");
  CHECK(refused.status == 0);
  CHECK_THAT(refused.error, Catch::Contains("TLS handshake"));

  JsonClient order = api.Presenting(api.order);
  CHECK(order.PostJson("/api/settle/prepare", kPrepare).status == 200);
  // The SDK's initiator presents its certificate too.
  auto client =
      MakeClient("https://127.0.0.1:" + std::to_string(api.settled.port()) + "/api/settle",
                 ClientOptions{.ca_file = api.ca.ca_file(),
                               .client_cert_file = api.order.cert_file,
                               .client_key_file = api.order.key_file});
  auto gid = client->NewGid();
  INFO(gid.status().ToString());
  CHECK(gid);
  auto anonymous =
      MakeClient("https://127.0.0.1:" + std::to_string(api.settled.port()) + "/api/settle",
                 ClientOptions{.ca_file = api.ca.ca_file()});
  auto none = anonymous->NewGid();
  REQUIRE_FALSE(none);
  CHECK_THAT(none.status().message(), Catch::Contains("TLS handshake"));

  auto mismatched =
      Client::Create("https://127.0.0.1:" + std::to_string(api.settled.port()) + "/api/settle",
                     ClientOptions{.client_cert_file = api.order.cert_file,
                                   .client_key_file = api.dashboard.key_file});
  REQUIRE_FALSE(mismatched);
  CHECK(mismatched.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(mismatched.status().message(),
             Catch::Contains("client_cert_file") && Catch::Contains(api.dashboard.key_file));
}

}  // namespace
}  // namespace settle::sdk
