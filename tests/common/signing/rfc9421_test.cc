// The examples of RFC 9421 Appendix B.2.5 and B.2.6, reproduced byte for byte: the signature
// base, the Signature-Input and Signature fields, and the signatures themselves (Ed25519 and
// HMAC-SHA256 are deterministic).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rfc9421_keys.h"
#include "settle/signing/keys.h"
#include "settle/signing/signature_base.h"

namespace settle::signing {
namespace {

using testing::kRfcEd25519Private;
using testing::kRfcEd25519Public;
using testing::kRfcSharedSecret;

// The test-request message's values (RFC 9421 Appendix B.2) that B.2.5 and B.2.6 cover.
const Component kDate{"date", "Tue, 20 Apr 2021 02:07:55 GMT"};
const Component kMethod{"@method", "POST"};
const Component kPath{"@path", "/foo"};
const Component kAuthority{"@authority", "example.com"};
const Component kContentType{"content-type", "application/json"};
const Component kContentLength{"content-length", "18"};

std::vector<std::string> NamesOf(const std::vector<Component>& covered) {
  std::vector<std::string> names;
  for (const Component& c : covered) names.push_back(c.name);
  return names;
}

TEST_CASE("RFC 9421 B.2.6: the ed25519 example's base and signature", "[signing][rfc9421]") {
  const std::vector<Component> covered = {kDate,      kMethod,      kPath,
                                          kAuthority, kContentType, kContentLength};
  const SignatureParams params{.components = NamesOf(covered),
                               .created = 1618884473,
                               .keyid = "test-key-ed25519",
                               .alg = ""};
  const std::string expected_base =
      "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n"
      "\"@method\": POST\n"
      "\"@path\": /foo\n"
      "\"@authority\": example.com\n"
      "\"content-type\": application/json\n"
      "\"content-length\": 18\n"
      "\"@signature-params\": (\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" "
      "\"content-length\");created=1618884473;keyid=\"test-key-ed25519\"";
  const std::string expected_signature =
      "wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==";
  const std::string rfc_input =
      "sig-b26=(\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" "
      "\"content-length\");created=1618884473;keyid=\"test-key-ed25519\"";
  const std::string rfc_signature = "sig-b26=:" + expected_signature + ":";

  Result<std::string> base = SignatureBase(covered, params);
  REQUIRE(base);
  CHECK(*base == expected_base);
  CHECK("sig-b26=" + SerializeParams(params) == rfc_input);

  auto key = SigningKey::FromText(kRfcEd25519Private);
  REQUIRE(key);
  CHECK(key->algorithm() == Algorithm::kEd25519);
  Result<std::string> signature = key->Sign(*base);
  REQUIRE(signature);
  CHECK(signature->size() == 64);
  CHECK(ByteSequence(*signature) == ":" + expected_signature + ":");

  // The RFC's fields read back to the same parameters and bytes.
  auto parsed = ParseSignatureInput(rfc_input);
  REQUIRE(parsed);
  CHECK(parsed->label == "sig-b26");
  CHECK(parsed->params.components == params.components);
  CHECK(parsed->params.created == 1618884473);
  CHECK(parsed->params.keyid == "test-key-ed25519");
  CHECK(parsed->params.alg.empty());
  auto rfc_bytes = ParseSignature(rfc_signature, "sig-b26");
  REQUIRE(rfc_bytes);
  CHECK(*rfc_bytes == *signature);

  // The RFC's public key verifies it, and its private key's public half too.
  for (std::string_view text : {kRfcEd25519Public, kRfcEd25519Private}) {
    auto verifier = VerifyingKey::FromText(text);
    REQUIRE(verifier);
    CHECK(verifier->keyid() == key->keyid());
    CHECK(verifier->Verify(expected_base, *rfc_bytes));
    CHECK_FALSE(verifier->Verify(expected_base + " ", *rfc_bytes));
  }
}

TEST_CASE("RFC 9421 B.2.5: the hmac-sha256 example's base and signature", "[signing][rfc9421]") {
  const std::vector<Component> covered = {kDate, kAuthority, kContentType};
  const SignatureParams params{.components = NamesOf(covered),
                               .created = 1618884473,
                               .keyid = "test-shared-secret",
                               .alg = ""};
  const std::string expected_base =
      "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n"
      "\"@authority\": example.com\n"
      "\"content-type\": application/json\n"
      "\"@signature-params\": (\"date\" \"@authority\" \"content-type\");created=1618884473;"
      "keyid=\"test-shared-secret\"";
  const std::string rfc_input =
      "sig-b25=(\"date\" \"@authority\" \"content-type\");created=1618884473;"
      "keyid=\"test-shared-secret\"";
  const std::string rfc_signature = "sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:";

  Result<std::string> base = SignatureBase(covered, params);
  REQUIRE(base);
  CHECK(*base == expected_base);
  CHECK("sig-b25=" + SerializeParams(params) == rfc_input);

  auto key = SigningKey::FromText(kRfcSharedSecret);
  REQUIRE(key);
  CHECK(key->algorithm() == Algorithm::kHmacSha256);
  Result<std::string> signature = key->Sign(*base);
  REQUIRE(signature);
  CHECK(signature->size() == 32);
  CHECK("sig-b25=" + ByteSequence(*signature) == rfc_signature);

  auto parsed = ParseSignatureInput(rfc_input);
  REQUIRE(parsed);
  CHECK(parsed->label == "sig-b25");
  CHECK(parsed->params.components == params.components);
  CHECK(parsed->params.keyid == "test-shared-secret");

  auto verifier = VerifyingKey::FromText(kRfcSharedSecret);
  REQUIRE(verifier);
  auto rfc_bytes = ParseSignature(rfc_signature, "sig-b25");
  REQUIRE(rfc_bytes);
  CHECK(verifier->Verify(expected_base, *rfc_bytes));
  CHECK_FALSE(verifier->Verify(expected_base, rfc_bytes->substr(0, 31)));
  std::string flipped = *rfc_bytes;
  flipped[0] = static_cast<char>(flipped[0] ^ 1);
  CHECK_FALSE(verifier->Verify(expected_base, flipped));
}

TEST_CASE("the RFC 9421 test keys get Settle's derived keyids", "[signing][rfc9421]") {
  auto ed25519 = SigningKey::FromText(kRfcEd25519Private);
  REQUIRE(ed25519);
  CHECK(ed25519->keyid() == testing::kRfcEd25519KeyId);
  auto hmac = SigningKey::FromText(kRfcSharedSecret);
  REQUIRE(hmac);
  CHECK(hmac->keyid() == testing::kRfcSharedSecretKeyId);
  CHECK(AlgorithmName(Algorithm::kEd25519) == "ed25519");
  CHECK(AlgorithmName(Algorithm::kHmacSha256) == "hmac-sha256");
}

}  // namespace
}  // namespace settle::signing
