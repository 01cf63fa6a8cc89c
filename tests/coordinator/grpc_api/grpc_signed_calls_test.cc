// settled signs its gRPC branch calls (docs/protocol.md §4.9) when it holds a key: the
// signature travels as metadata, and a participant that refuses it (UNAUTHENTICATED) is
// retried, never read as a FAILURE. Real gRPC participants on 127.0.0.1, the settled of this
// process.
#include <catch2/catch.hpp>

#include <string>

#include "grpc_participant.h"
#include "in_process_settled.h"
#include "settle/signing/grpc_call_signature.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::GrpcCall;
using testing::GrpcParticipant;
using testing::InProcessSettled;

// An HMAC-SHA256 secret of 32 bytes, as `echo "hmac:$(openssl rand -base64 32)"` writes it.
constexpr std::string_view kSecret = "hmac:q1Xv0ZxY7h3rG9mK2pL8sT4wB6nE5cR0uJ1iO7aD3fU=";

signing::SigningKey Signer() {
  auto key = signing::SigningKey::FromText(kSecret);
  REQUIRE(key);
  return *key;
}

// A verifier that answers to 127.0.0.1:`port`.
signing::VerifyPolicy Policy(int port, bool check_authority = true) {
  auto key = signing::VerifyingKey::FromText(kSecret);
  REQUIRE(key);
  return signing::VerifyPolicy{.keys = {*key},
                               .check_authority = check_authority,
                               .authorities = {"127.0.0.1:" + std::to_string(port)}};
}

// The call as the participant received it, to verify.
signing::SignedGrpcCall Received(const GrpcCall& call, int port) {
  signing::SignedGrpcCall out{.authority = "127.0.0.1:" + std::to_string(port),
                              .method = call.method,
                              .metadata = {},
                              .message = call.body};
  out.metadata.assign(call.metadata.begin(), call.metadata.end());
  return out;
}

std::int64_t Now() { return ToUnixMillis(SystemClock().Now()) / 1000; }

json Saga(const std::string& gid, const GrpcParticipant& bank) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps",
           {{{"action", bank.Url("bank.Bank/TransOut")},
             {"compensate", bank.Url("bank.Bank/TransOutRevert")}}}},
          {"payloads", {std::string("\x08\x1e", 2)}},
          {"branch_headers", {{"X-Trace-Id", "t-1"}}}};
}

TEST_CASE("settled signs each gRPC branch call over its method, authority, dtm-* and message",
          "[grpc][calls][signing]") {
  GrpcParticipant bank;
  InProcessSettled s([](app::ServerConfig& c) { c.signing_key = Signer(); });
  json saga = Saga("signed-grpc", bank);
  saga["wait_result"] = true;
  REQUIRE(s.Call("submit", saga).status == 200);
  CHECK(s.StatusOf("signed-grpc") == "succeed");
  const auto calls = bank.CallsTo("/bank.Bank/TransOut");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0]
            .Meta("signature-input")
            .starts_with("settle=(\"@method\" \"@authority\" \"@path\" \"dtm-gid\" "
                         "\"dtm-trans_type\" \"dtm-branch_id\" \"dtm-op\" \"dtm-dtm\" "
                         "\"content-digest\");created="));
  CHECK(calls[0].Meta("x-trace-id") == "t-1");  // sent, not covered
  CHECK(VerifyGrpcCall(Received(calls[0], bank.port()), Policy(bank.port()), Now()).ok());
  // The same call at a participant that answers to another authority does not verify.
  signing::SignedGrpcCall elsewhere = Received(calls[0], bank.port());
  elsewhere.authority = "127.0.0.1:1";
  CHECK_FALSE(VerifyGrpcCall(elsewhere, Policy(1), Now()).ok());
}

TEST_CASE("with --unsigned-authority settled's gRPC signatures leave the authority out",
          "[grpc][calls][signing]") {
  GrpcParticipant bank;
  InProcessSettled s([](app::ServerConfig& c) {
    c.signing_key = Signer();
    c.unsigned_authority = true;
  });
  json saga = Saga("unsigned-authority", bank);
  saga["wait_result"] = true;
  REQUIRE(s.Call("submit", saga).status == 200);
  const auto calls = bank.CallsTo("/bank.Bank/TransOut");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].Meta("signature-input").find("@authority") == std::string::npos);
  signing::SignedGrpcCall proxied = Received(calls[0], bank.port());
  proxied.authority = "bank.internal:80";
  CHECK(VerifyGrpcCall(proxied, Policy(bank.port(), /*check_authority=*/false), Now()).ok());
}

TEST_CASE(
    "a gRPC participant's UNAUTHENTICATED is retried, last_error saying it refuses settled's "
    "signature",
    "[grpc][calls][signing]") {
  GrpcParticipant bank;
  const signing::SigningKey key = Signer();
  InProcessSettled s([&](app::ServerConfig& c) { c.signing_key = key; });
  bank.Script("/bank.Bank/TransOut", {{16, "signature: unknown keyid \"" + key.keyid() + "\""},
                                      {16, "signature: unknown keyid \"" + key.keyid() + "\""}});
  REQUIRE(s.Call("submit", Saga("refused-grpc", bank)).status == 200);
  REQUIRE(s.WaitUntil("refused-grpc", [&](const json& q) {
    if (!q.is_object() || !q["branches"].is_array()) return false;
    for (const json& b : q["branches"]) {
      if (b.value("last_error", "")
              .find("the participant refuses settled's signature (key " + key.keyid() +
                    "): gRPC UNAUTHENTICATED: signature: ") != std::string::npos) {
        return true;
      }
    }
    return false;
  }));
  // Not a FAILURE: nothing is compensated, and the third try goes through.
  REQUIRE(s.WaitForStatus("refused-grpc", "succeed"));
  CHECK(bank.CountCalls("/bank.Bank/TransOut") == 3);
  CHECK(bank.CountCalls("/bank.Bank/TransOutRevert") == 0);
}

}  // namespace
}  // namespace settle
