// The bank's GET /metrics (examples/bank): with the coordinator's key, the calls it refuses for
// their signature, by reason, in Prometheus's text format (its HTTP and its gRPC server's);
// without a key, no such route.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "bank_fixture.h"
#include "json_client.h"
#include "settle/core/grpc_target.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/sdk/signed_calls.h"
#include "settle/signing/keys.h"
#include "temp_dir.h"

namespace settle::bank {
namespace {

// settled's key as the bank holds it: an HMAC-SHA256 secret of 32 bytes, declared "hmac:".
constexpr std::string_view kSettledSecret = "hmac:c2V0dGxlZCdzIHNlY3JldCBmb3IgdGhlIGJhbmsgISE=";

std::unique_ptr<BankService> StartedBank(const BankOptions& options, int& port) {
  auto bank = BankService::Open(options);
  REQUIRE(bank);
  auto bound = (*bank)->Start("127.0.0.1", 0);
  REQUIRE(bound);
  port = *bound;
  return std::move(*bank);
}

TEST_CASE("a bank verifying signatures serves its refusals by reason on GET /metrics",
          "[bank][signing][metrics]") {
  testing::TempDir dir;
  auto key = signing::VerifyingKey::FromText(kSettledSecret);
  REQUIRE(key);
  BankOptions options{.db_path = dir.File("bank.db"), .accounts = 2};
  options.signed_calls =
      sdk::SignedCalls{.keys = {*key}, .try_policy = sdk::SignedCalls::TryPolicy::kUnsigned};
  int port = 0;
  auto bank = StartedBank(options, port);
  testing::JsonClient client(port);

  auto grpc_port = bank->StartGrpc("127.0.0.1", 0);
  REQUIRE(grpc_port);

  const std::string body = TransferBody("1", 30);
  CHECK(
      client.Post("/api/TransIn" + BranchQuery("forged-1", "saga", "01", "action"), body).status ==
      401);
  // The same forgery over gRPC, claiming to be an XA action (the initiator's, which the policy
  // accepts unsigned) on a saga action's method: refused, and counted with the HTTP ones.
  auto target =
      ParseGrpcTarget("grpc://127.0.0.1:" + std::to_string(*grpc_port) + "/bank.Bank/TransIn");
  REQUIRE(target);
  grpc_unary::UnaryRequest forged{
      .method = target->method, .message = body, .timeout = std::chrono::seconds(10)};
  grpc_unary::AddBranchMetadata(
      forged.metadata,
      {.gid = "forged-3", .trans_type = "xa", .branch_id = "01", .op = "action", .dtm = ""});
  grpc_unary::ChannelPool channels(grpc_unary::ChannelTls{});
  const grpc_unary::UnaryAnswer refused =
      grpc_unary::CallUnary(channels.To(*target), std::move(forged));
  CHECK(refused.code == 16);  // UNAUTHENTICATED
  CHECK(refused.message == "signature: no signature-input");
  // An unsigned Try is the policy's to accept: not a refusal.
  CHECK(client.Post("/api/TransOutTry" + BranchQuery("try-1", "tcc", "01", "try"), body).status ==
        200);
  // A signature's parameters without the signature.
  client.SetHeader("Signature-Input", "settle=(\"@method\");created=1;keyid=\"k\"");
  CHECK(client.Post("/api/TransInConfirm" + BranchQuery("forged-2", "tcc", "01", "confirm"), body)
            .status == 401);

  const testing::JsonResponse metrics = client.Get("/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK_THAT(
      metrics.body,
      Catch::Contains("# HELP settle_participant_signature_refusals_total ") &&
          Catch::Contains("# TYPE settle_participant_signature_refusals_total counter\n") &&
          Catch::Contains("settle_participant_signature_refusals_total{reason=\"unsigned\"} "
                          "2\n") &&
          Catch::Contains("settle_participant_signature_refusals_total{reason=\"malformed\"} "
                          "1\n") &&
          Catch::Contains(
              "settle_participant_signature_refusals_total{reason=\"outside_window\"} 0\n"));
}

TEST_CASE(
    "a bank that does not verify signatures serves its connection counts on /metrics, "
    "no signature refusals",
    "[bank][metrics]") {
  testing::TempDir dir;
  int port = 0;
  auto bank = StartedBank({.db_path = dir.File("bank.db"), .accounts = 2}, port);
  testing::JsonClient client(port);
  const testing::JsonResponse metrics = client.Get("/metrics");
  CHECK(metrics.status == 200);
  CHECK_THAT(metrics.body, Catch::Contains("settle_participant_connections_refused_total 0\n") &&
                               !Catch::Contains("signature_refusals"));
}

}  // namespace
}  // namespace settle::bank
