#include "settle/signing/keys.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "rfc9421_keys.h"
#include "temp_dir.h"

namespace settle::signing {
namespace {

// Runs a shell command (the openssl tool), throwing if it fails.
void Run(const std::string& command) {
  const std::string quiet = command + " 2>/dev/null";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsHex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

TEST_CASE("an Ed25519 key pair made by openssl: the private key signs, the public verifies",
          "[signing][keys]") {
  settle::testing::TempDir dir;
  const std::string private_file = dir.File("key.pem");
  const std::string public_file = dir.File("key.pub");
  Run("openssl genpkey -algorithm ed25519 -out '" + private_file + "'");
  Run("openssl pkey -in '" + private_file + "' -pubout -out '" + public_file + "'");
  // The keyid as the docs derive it, computed by the openssl tool: SHA-256 over the raw public
  // key, which is the last 32 bytes of the DER SubjectPublicKeyInfo.
  Run("openssl pkey -in '" + private_file +
      "' -pubout -outform DER | tail -c 32 | openssl dgst "
      "-sha256 -r | cut -c1-16 > '" +
      dir.File("keyid") + "'");
  const std::string expected_keyid = "ed25519-" + ReadFile(dir.File("keyid")).substr(0, 16);

  auto signer = SigningKey::FromText(ReadFile(private_file));
  REQUIRE(signer);
  CHECK(signer->algorithm() == Algorithm::kEd25519);
  CHECK(signer->keyid() == expected_keyid);
  CHECK(signer->keyid().size() == std::string("ed25519-").size() + 16);
  CHECK(IsHex(signer->keyid().substr(8)));

  auto verifier = VerifyingKey::FromText(ReadFile(public_file));
  REQUIRE(verifier);
  CHECK(verifier->algorithm() == Algorithm::kEd25519);
  CHECK(verifier->keyid() == signer->keyid());
  auto from_private = VerifyingKey::FromText(ReadFile(private_file));
  REQUIRE(from_private);
  CHECK(from_private->keyid() == signer->keyid());

  const std::string base = "\"@method\": POST\n\"@signature-params\": (\"@method\")";
  auto signature = signer->Sign(base);
  REQUIRE(signature);
  CHECK(signature->size() == 64);
  CHECK(verifier->Verify(base, *signature));
  CHECK(from_private->Verify(base, *signature));
  CHECK_FALSE(verifier->Verify(base + "x", *signature));
  CHECK_FALSE(verifier->Verify(base, signature->substr(0, 63)));
  CHECK_FALSE(verifier->Verify(base, *signature + "x"));
  CHECK_FALSE(verifier->Verify(base, ""));

  // Another key pair has another keyid and does not verify this signature.
  Run("openssl genpkey -algorithm ed25519 -out '" + dir.File("other.pem") + "'");
  auto other = VerifyingKey::FromText(ReadFile(dir.File("other.pem")));
  REQUIRE(other);
  CHECK(other->keyid() != signer->keyid());
  CHECK_FALSE(other->Verify(base, *signature));
}

TEST_CASE("an HMAC secret from openssl rand -base64 signs and verifies", "[signing][keys]") {
  settle::testing::TempDir dir;
  Run("openssl rand -base64 32 > '" + dir.File("secret") + "'");
  const std::string text = ReadFile(dir.File("secret"));
  REQUIRE(text.ends_with("\n"));
  auto signer = SigningKey::FromText(text);
  REQUIRE(signer);
  CHECK(signer->algorithm() == Algorithm::kHmacSha256);
  CHECK(signer->keyid().starts_with("hmac-"));
  CHECK(signer->keyid().size() == std::string("hmac-").size() + 16);
  CHECK(IsHex(signer->keyid().substr(5)));
  auto verifier = VerifyingKey::FromText(text);
  REQUIRE(verifier);
  CHECK(verifier->keyid() == signer->keyid());

  auto signature = signer->Sign("base");
  REQUIRE(signature);
  CHECK(signature->size() == 32);
  CHECK(verifier->Verify("base", *signature));
  CHECK_FALSE(verifier->Verify("base2", *signature));
  CHECK_FALSE(verifier->Verify("base", signature->substr(1)));

  // 64 bytes: openssl wraps the base64 over two lines.
  Run("openssl rand -base64 64 > '" + dir.File("long") + "'");
  const std::string long_text = ReadFile(dir.File("long"));
  auto long_key = SigningKey::FromText(long_text);
  REQUIRE(long_key);
  CHECK(long_key->keyid() != signer->keyid());
  // Surrounding blanks and CRLF line ends are ignored.
  auto padded =
      VerifyingKey::FromText("  \r\n" + std::string(testing::kRfcSharedSecret) + "\r\n\t");
  REQUIRE(padded);
  CHECK(padded->keyid() == testing::kRfcSharedSecretKeyId);
}

TEST_CASE("a short HMAC secret is refused", "[signing][keys]") {
  // 31 bytes.
  const std::string short_secret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==";
  for (bool signing : {true, false}) {
    const Status status = signing ? SigningKey::FromText(short_secret).status()
                                  : VerifyingKey::FromText(short_secret).status();
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(status.message() ==
          "the HMAC secret is 31 bytes; at least 32 are needed (openssl rand -base64 32)");
  }
  CHECK(SigningKey::FromText("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="));  // 32 bytes
}

TEST_CASE("text that is no key is refused without being quoted", "[signing][keys]") {
  const std::string secretish = "hunter2-this-is-not-base64!";
  for (const std::string& text : {secretish, std::string("c2VjcmV0 c2VjcmV0"),
                                  std::string("QUJD\nREVG=\nR0hJ"), std::string("A")}) {
    auto key = SigningKey::FromText(text);
    REQUIRE_FALSE(key);
    CHECK(key.status().message() ==
          "the key file is neither a PEM key nor base64 text (an HMAC secret)");
    if (text.size() > 1) CHECK(key.status().message().find(text) == std::string::npos);
    CHECK_FALSE(VerifyingKey::FromText(text));
  }
  for (std::string_view blank : {"", " \n\t\r\n"}) {
    auto key = VerifyingKey::FromText(blank);
    REQUIRE_FALSE(key);
    CHECK(key.status().message() == "the key file is empty");
  }
}

TEST_CASE("PEM keys that are not an unencrypted Ed25519 key are refused", "[signing][keys]") {
  settle::testing::TempDir dir;
  // A public key cannot sign.
  auto public_signer = SigningKey::FromText(testing::kRfcEd25519Public);
  REQUIRE_FALSE(public_signer);
  CHECK_THAT(public_signer.status().message(), Catch::Contains("is a public key"));

  // Another algorithm.
  Run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out '" + dir.File("ec.pem") +
      "'");
  Run("openssl pkey -in '" + dir.File("ec.pem") + "' -pubout -out '" + dir.File("ec.pub") + "'");
  for (const std::string& file : {dir.File("ec.pem"), dir.File("ec.pub")}) {
    auto verifier = VerifyingKey::FromText(ReadFile(file));
    REQUIRE_FALSE(verifier);
    CHECK(verifier.status().message() == "the PEM key is not an Ed25519 key");
  }
  CHECK_FALSE(SigningKey::FromText(ReadFile(dir.File("ec.pem"))));

  // An encrypted key is refused, never asking for a passphrase.
  Run("openssl genpkey -algorithm ed25519 -aes-256-cbc -pass pass:secret-pass -out '" +
      dir.File("encrypted.pem") + "'");
  auto encrypted = SigningKey::FromText(ReadFile(dir.File("encrypted.pem")));
  REQUIRE_FALSE(encrypted);
  CHECK_THAT(encrypted.status().message(), Catch::Contains("is encrypted"));

  // A damaged block.
  std::string damaged(testing::kRfcEd25519Private);
  damaged.replace(damaged.find("MC4C"), 4, "XXXX");
  auto broken = SigningKey::FromText(damaged);
  REQUIRE_FALSE(broken);
  CHECK(broken.status().message() == "the PEM private key cannot be read");
  auto truncated = VerifyingKey::FromText(testing::kRfcEd25519Public.substr(0, 40));
  REQUIRE_FALSE(truncated);
  CHECK(truncated.status().message() == "the PEM public key cannot be read");
  auto certificate = VerifyingKey::FromText(
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
      "CERTIFICATE-----\n");
  REQUIRE_FALSE(certificate);
  CHECK(certificate.status().message() == "the PEM block is not a key");

  // None of these failures is left in OpenSSL's error queue for the next caller: a good key
  // still reads and signs.
  auto good = SigningKey::FromText(testing::kRfcEd25519Private);
  REQUIRE(good);
  CHECK(good->Sign("x"));
}

TEST_CASE("keys are values that share their material", "[signing][keys]") {
  auto key = SigningKey::FromText(testing::kRfcEd25519Private);
  REQUIRE(key);
  const SigningKey copy = *key;
  auto verifier = VerifyingKey::FromText(testing::kRfcEd25519Public);
  REQUIRE(verifier);
  std::vector<VerifyingKey> keys(3, *verifier);
  auto signature = copy.Sign("shared");
  REQUIRE(signature);
  for (const VerifyingKey& k : keys) CHECK(k.Verify("shared", *signature));
}

}  // namespace
}  // namespace settle::signing
