#include "settle/signing/keys.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "key_files.h"
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

TEST_CASE("a shared secret declared hmac: signs and verifies, with the keyid of its secret",
          "[signing][keys]") {
  settle::testing::TempDir dir;
  const std::string file = settle::testing::WriteHmacKeyFile(dir.path().string(), "secret.key");
  const std::string text = ReadFile(file);
  REQUIRE(text.starts_with("hmac:"));
  REQUIRE(text.ends_with("\n"));
  // The keyid as the docs derive it, computed by the openssl tool: SHA-256 over the secret,
  // the base64 after "hmac:" decoded. The prefix changes nothing of it.
  Run("tail -c +6 '" + file + "' | openssl base64 -d | openssl dgst -sha256 -r | cut -c1-16 > '" +
      dir.File("keyid") + "'");
  const std::string expected_keyid = "hmac-" + ReadFile(dir.File("keyid")).substr(0, 16);

  auto signer = SigningKey::FromText(text);
  REQUIRE(signer);
  CHECK(signer->algorithm() == Algorithm::kHmacSha256);
  CHECK(signer->keyid() == expected_keyid);
  CHECK(IsHex(signer->keyid().substr(5)));
  auto verifier = VerifyingKey::FromFile(file);
  REQUIRE(verifier);
  CHECK(verifier->algorithm() == Algorithm::kHmacSha256);
  CHECK(verifier->keyid() == signer->keyid());
  auto from_file = SigningKey::FromFile(file);
  REQUIRE(from_file);
  CHECK(from_file->keyid() == signer->keyid());

  auto signature = signer->Sign("base");
  REQUIRE(signature);
  CHECK(signature->size() == 32);
  CHECK(verifier->Verify("base", *signature));
  CHECK_FALSE(verifier->Verify("base2", *signature));
  CHECK_FALSE(verifier->Verify("base", signature->substr(1)));

  // 64 bytes: openssl wraps the base64 over two lines.
  const std::string long_file =
      settle::testing::WriteHmacKeyFile(dir.path().string(), "long.key", 64);
  REQUIRE(ReadFile(long_file).find('\n') < ReadFile(long_file).size() - 1);
  auto long_key = SigningKey::FromFile(long_file);
  REQUIRE(long_key);
  CHECK(long_key->keyid() != signer->keyid());
  // Surrounding blanks, blanks after "hmac:" and CRLF line ends are ignored; the keyid of the
  // RFC's secret is the one it had before secrets were declared.
  const std::string base64(testing::kRfcSharedSecret.substr(5));
  for (const std::string& padded :
       {"  \r\n" + std::string(testing::kRfcSharedSecret) + "\r\n\t", "hmac: " + base64 + "\n",
        "hmac:" + base64.substr(0, 40) + "\r\n" + base64.substr(40) + "\r\n"}) {
    auto key = VerifyingKey::FromText(padded);
    REQUIRE(key);
    CHECK(key->keyid() == testing::kRfcSharedSecretKeyId);
  }
  CHECK(SigningKey::FromText("hmac:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="));  // 32 bytes
}

// No part of `material` (12 characters or more of it) is in `message`.
bool Quotes(const std::string& message, const std::string& material) {
  constexpr std::size_t kWindow = 12;
  for (std::size_t i = 0; i + kWindow <= material.size(); ++i) {
    if (message.find(material.substr(i, kWindow)) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("every key file that is not PEM or declared hmac: is refused, naming the file",
          "[signing][keys]") {
  settle::testing::TempDir dir;
  const std::vector<settle::testing::RefusedKeyFile> refused =
      settle::testing::WriteRefusedKeyFiles(dir.path().string());
  for (const settle::testing::RefusedKeyFile& file : refused) {
    INFO(file.form);
    const std::string text = ReadFile(file.path);
    auto signer = SigningKey::FromFile(file.path);
    REQUIRE_FALSE(signer);
    CHECK(signer.status().code() == StatusCode::kInvalidArgument);
    CHECK(signer.status().message() ==
          file.path + ": " + SigningKey::FromText(text).status().message());
    CHECK_THAT(signer.status().message(),
               Catch::StartsWith(file.path + ": " + file.because) &&
                   Catch::Contains("; expected an Ed25519 private key in PEM (openssl genpkey "
                                   "-algorithm ed25519) or a shared secret declared as "
                                   "hmac:<base64 of 32 bytes or more> (echo \"hmac:$(openssl "
                                   "rand -base64 32)\")"));
    CHECK_FALSE(Quotes(signer.status().message(), file.material));

    auto verifier = VerifyingKey::FromFile(file.path);
    if (file.refused_to_signer_only) {
      CHECK(verifier);
      continue;
    }
    REQUIRE_FALSE(verifier);
    CHECK(verifier.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(verifier.status().message(),
               Catch::StartsWith(file.path + ": " + file.because) &&
                   Catch::Contains("; expected an Ed25519 public key in PEM (openssl pkey "
                                   "-pubout), or its private key, or a shared secret declared "
                                   "as hmac:"));
    CHECK_FALSE(Quotes(verifier.status().message(), file.material));
  }
  // A file that cannot be read is named with the system's reason.
  auto missing = VerifyingKey::FromFile(dir.File("missing.key"));
  REQUIRE_FALSE(missing);
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);
  CHECK(missing.status().message() ==
        "cannot read " + dir.File("missing.key") + ": No such file or directory");
}

TEST_CASE("a public key's body without its PEM lines is never a shared secret", "[signing][keys]") {
  // The attack this refusal stops: settled's public key pasted without its -----BEGIN/-----END
  // lines was read as an HMAC secret that anyone holding the public key could sign with.
  const std::string body = "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=";
  REQUIRE(std::string(testing::kRfcEd25519Public).find(body) != std::string::npos);
  for (const std::string& text : {body, body + "\n", "hmac:" + body}) {
    INFO(text);
    auto verifier = VerifyingKey::FromText(text);
    REQUIRE_FALSE(verifier);
    CHECK_THAT(verifier.status().message(), Catch::Contains("base64 body of an Ed25519"));
    CHECK_FALSE(SigningKey::FromText(text));
  }
  // Its PEM form is the public key it is, and verifies as Ed25519 only.
  auto public_key = VerifyingKey::FromText(testing::kRfcEd25519Public);
  REQUIRE(public_key);
  CHECK(public_key->algorithm() == Algorithm::kEd25519);
  CHECK(public_key->keyid() == testing::kRfcEd25519KeyId);
}

TEST_CASE("a short or undecodable hmac: secret is refused", "[signing][keys]") {
  // 31 bytes.
  const std::string short_secret = "hmac:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==";
  for (bool signing : {true, false}) {
    const Status status = signing ? SigningKey::FromText(short_secret).status()
                                  : VerifyingKey::FromText(short_secret).status();
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(status.message(),
               Catch::StartsWith("the secret after hmac: is 31 bytes, fewer than the 32 needed; "
                                 "expected "));
  }
  for (const std::string& text :
       {std::string("hmac:c2VjcmV0 c2VjcmV0"), std::string("hmac:QUJD\nREVG=\nR0hJ"),
        std::string("hmac:hunter2-this-is-not-base64!"), std::string("hmac:A")}) {
    auto key = SigningKey::FromText(text);
    REQUIRE_FALSE(key);
    CHECK_THAT(key.status().message(), Catch::StartsWith("the secret after hmac: is not base64; "));
    CHECK_FALSE(Quotes(key.status().message(), text.substr(5)));
  }
  CHECK_THAT(VerifyingKey::FromText("hmac:  \n").status().message(),
             Catch::StartsWith("no secret follows hmac:; expected "));
  // The prefix is "hmac:" as written: another spelling is not a declaration.
  CHECK_THAT(VerifyingKey::FromText("HMAC:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
                 .status()
                 .message(),
             Catch::StartsWith("the file is neither a PEM key nor a shared secret"));
}

TEST_CASE("bare base64, text and blanks are refused without being quoted", "[signing][keys]") {
  // Bare base64 of 32 bytes: what an HMAC key file held before secrets were declared.
  const std::string bare = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
  for (const std::string& text :
       {bare, bare + "\n", std::string(testing::kRfcSharedSecret.substr(5))}) {
    auto key = VerifyingKey::FromText(text);
    REQUIRE_FALSE(key);
    CHECK_THAT(key.status().message(),
               Catch::StartsWith("the file holds bare base64, which is no key: a shared secret "
                                 "must be declared with hmac:, and a PEM key keeps its -----BEGIN "
                                 "and -----END lines; expected "));
    CHECK_FALSE(Quotes(key.status().message(), text));
    CHECK_FALSE(SigningKey::FromText(text));
  }
  const std::string secretish = "hunter2-this-is-not-base64!";
  for (const std::string& text : {secretish, std::string("c2VjcmV0 c2VjcmV0"),
                                  std::string("QUJD\nREVG=\nR0hJ"), std::string("A")}) {
    auto key = SigningKey::FromText(text);
    REQUIRE_FALSE(key);
    CHECK_THAT(key.status().message(),
               Catch::StartsWith(
                   "the file is neither a PEM key nor a shared secret declared with hmac:; "));
    CHECK_FALSE(Quotes(key.status().message(), text));
    CHECK_FALSE(VerifyingKey::FromText(text));
  }
  for (std::string_view blank : {"", " \n\t\r\n"}) {
    auto key = VerifyingKey::FromText(blank);
    REQUIRE_FALSE(key);
    CHECK_THAT(key.status().message(), Catch::StartsWith("the file is empty; expected "));
  }
}

TEST_CASE("PEM keys that are not an unencrypted Ed25519 key are refused", "[signing][keys]") {
  settle::testing::TempDir dir;
  // A public key cannot sign.
  auto public_signer = SigningKey::FromText(testing::kRfcEd25519Public);
  REQUIRE_FALSE(public_signer);
  CHECK_THAT(public_signer.status().message(),
             Catch::StartsWith("the PEM block is a public key, which cannot sign; expected an "
                               "Ed25519 private key"));

  // Another algorithm.
  Run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out '" + dir.File("ec.pem") +
      "'");
  Run("openssl pkey -in '" + dir.File("ec.pem") + "' -pubout -out '" + dir.File("ec.pub") + "'");
  for (const std::string& file : {dir.File("ec.pem"), dir.File("ec.pub")}) {
    auto verifier = VerifyingKey::FromText(ReadFile(file));
    REQUIRE_FALSE(verifier);
    CHECK_THAT(verifier.status().message(),
               Catch::StartsWith("the PEM key is not an Ed25519 key; expected "));
  }
  CHECK_FALSE(SigningKey::FromText(ReadFile(dir.File("ec.pem"))));
  // The same key in OpenSSL's older, algorithm-specific form.
  Run("openssl pkey -in '" + dir.File("ec.pem") + "' -traditional -out '" +
      dir.File("ec-traditional.pem") + "'");
  auto traditional = SigningKey::FromText(ReadFile(dir.File("ec-traditional.pem")));
  REQUIRE_FALSE(traditional);
  CHECK_THAT(
      traditional.status().message(),
      Catch::StartsWith("the PEM block is labelled EC PRIVATE KEY, not PRIVATE KEY or PUBLIC KEY"));

  // An encrypted key is refused, never asking for a passphrase.
  Run("openssl genpkey -algorithm ed25519 -aes-256-cbc -pass pass:secret-pass -out '" +
      dir.File("encrypted.pem") + "'");
  auto encrypted = SigningKey::FromText(ReadFile(dir.File("encrypted.pem")));
  REQUIRE_FALSE(encrypted);
  CHECK_THAT(encrypted.status().message(),
             Catch::StartsWith("the PEM block is an encrypted private key"));

  // A damaged block.
  std::string damaged(testing::kRfcEd25519Private);
  damaged.replace(damaged.find("MC4C"), 4, "XXXX");
  auto broken = SigningKey::FromText(damaged);
  REQUIRE_FALSE(broken);
  CHECK_THAT(broken.status().message(),
             Catch::StartsWith("the PEM private key cannot be read (damaged or cut short); "));
  auto truncated = VerifyingKey::FromText(testing::kRfcEd25519Public.substr(0, 40));
  REQUIRE_FALSE(truncated);
  CHECK_THAT(truncated.status().message(),
             Catch::StartsWith("the PEM public key cannot be read (damaged or cut short); "));
  auto certificate = VerifyingKey::FromText(
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
      "CERTIFICATE-----\n");
  REQUIRE_FALSE(certificate);
  CHECK_THAT(certificate.status().message(),
             Catch::StartsWith("the PEM block is labelled CERTIFICATE, not PRIVATE KEY or PUBLIC "
                               "KEY; expected "));
  // A label that is not a label's words is not repeated.
  auto odd = VerifyingKey::FromText("-----BEGIN hunter2 secret-----\nAAAA\n-----END x-----\n");
  REQUIRE_FALSE(odd);
  CHECK_THAT(odd.status().message(),
             Catch::StartsWith("the PEM block's label is not PRIVATE KEY or PUBLIC KEY; "));
  CHECK_FALSE(Quotes(odd.status().message(), "hunter2 secret"));

  // None of these failures is left in OpenSSL's error queue for the next caller: a good key
  // still reads and signs.
  auto good = SigningKey::FromText(testing::kRfcEd25519Private);
  REQUIRE(good);
  CHECK(good->Sign("x"));
}

TEST_CASE("a key is described for a log line by its algorithm and keyid", "[signing][keys]") {
  auto ed25519 = SigningKey::FromText(testing::kRfcEd25519Private);
  auto ed25519_public = VerifyingKey::FromText(testing::kRfcEd25519Public);
  auto hmac = VerifyingKey::FromText(testing::kRfcSharedSecret);
  REQUIRE(ed25519);
  REQUIRE(ed25519_public);
  REQUIRE(hmac);
  CHECK(DescribeKey(*ed25519) == "ed25519 ed25519-b16c2d1bead12626");
  CHECK(DescribeKey(*hmac) == "hmac-sha256 hmac-57ca14d520f889be");
  CHECK(DescribeKeys({*ed25519_public, *hmac}) ==
        "ed25519 ed25519-b16c2d1bead12626, hmac-sha256 hmac-57ca14d520f889be");
  CHECK(DescribeKeys({}) == "no key");
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
