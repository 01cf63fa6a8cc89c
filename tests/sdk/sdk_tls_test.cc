// The SDK over HTTPS end to end: a participant serving its branches with a certificate, a
// client trusting a CA, and the real settled serving its API over TLS and calling the
// participant over TLS. A throwaway CA is made with openssl while the test runs.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#include "sdk_test_support.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"
#include "settled_process.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::sdk {
namespace {

using settle::testing::SettledProcess;
using settle::testing::TempDir;
using settle::testing::TestCa;
using namespace settle::sdk::test;

struct Counting {
  std::atomic<int> tries{0}, confirms{0}, cancels{0}, actions{0};
};

TEST_CASE(
    "a TCC and a saga run over HTTPS: client to settled, client to Try, settled to the "
    "participant",
    "[sdk][tls][process]") {
  TempDir dir;
  TestCa ca(dir.path());
  const TestCa::Issued cert = ca.IssueForLocalhost();

  Counting count;
  ParticipantOptions options;
  options.tls_cert_file = cert.cert_file;
  options.tls_key_file = cert.key_file;
  Participant participant(options);
  participant.OnTry("/Try", [&](const BranchRequest&) {
    ++count.tries;
    return BranchReply::Success();
  });
  participant.OnConfirm("/Confirm", [&](const BranchRequest&) {
    ++count.confirms;
    return BranchReply::Success();
  });
  participant.OnCancel("/Cancel", [&](const BranchRequest&) {
    ++count.cancels;
    return BranchReply::Success();
  });
  participant.OnAction("/Action", [&](const BranchRequest&) {
    ++count.actions;
    return BranchReply::Success();
  });
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "https://localhost:" + std::to_string(*port);

  SettledProcess settled(dir.File("settle.db"), {"--tls-cert", cert.cert_file, "--tls-key",
                                                 cert.key_file, "--ca-file", ca.ca_file()});
  ClientOptions client_options;
  client_options.ca_file = ca.ca_file();
  auto client = MakeClient("https://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle",
                           client_options);

  TransOptions wait;
  wait.wait_result = true;
  auto tcc = RunTcc(*client, "tls-tcc", wait, [&](Tcc& t) {
    auto branch = t.CallBranch("{}", base + "/Try", base + "/Confirm", base + "/Cancel");
    return branch ? Status::Ok() : branch.status();
  });
  REQUIRE(tcc);
  CHECK(tcc->status == GlobalStatus::kSucceed);
  CHECK(count.tries == 1);
  CHECK(count.confirms == 1);

  Saga saga(*client, "tls-saga");
  saga.Add(base + "/Action", "", "{}");
  saga.options().wait_result = true;
  auto submitted = saga.Submit();
  REQUIRE(submitted);
  CHECK(submitted->status == GlobalStatus::kSucceed);
  CHECK(count.actions == 1);
  CHECK(count.cancels == 0);

  // A client that does not trust the CA is refused in the handshake.
  auto stranger = MakeClient("https://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
  auto refused = stranger->NewGid();
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(refused.status().message(), Catch::Contains("TLS handshake"));
}

}  // namespace
}  // namespace settle::sdk
