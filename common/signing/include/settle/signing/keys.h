#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "settle/core/status.h"

namespace settle::signing {

// The two algorithms of RFC 9421 §3.3 that Settle uses, through OpenSSL: "ed25519" (a private
// key signs, its public key verifies) and "hmac-sha256" (one shared secret does both).
enum class Algorithm { kEd25519, kHmacSha256 };

// "ed25519" or "hmac-sha256", the alg parameter's value.
std::string_view AlgorithmName(Algorithm algorithm);

// The key a signer holds. Read from a key file's text:
//   an Ed25519 private key in PEM (PKCS #8, as `openssl genpkey -algorithm ed25519` writes it);
//   or an HMAC secret: one line of base64 (as `openssl rand -base64 32` writes it) of at least
//   32 bytes.
// Its keyid is derived from the key, so that a verifier's copy of the same key finds it:
// "ed25519-" or "hmac-" and the first 16 hex digits of SHA-256 over the raw public key (32
// bytes) or the secret.
class SigningKey {
 public:
  // InvalidArgument saying what is wrong with the text (never quoting a secret).
  static Result<SigningKey> FromText(std::string_view text);

  Algorithm algorithm() const { return algorithm_; }
  const std::string& keyid() const { return keyid_; }
  // The signature of `base`: 64 bytes for Ed25519, 32 for HMAC-SHA256.
  Result<std::string> Sign(std::string_view base) const;

  struct Material;  // OpenSSL's key, or the secret

 private:
  SigningKey() = default;
  Algorithm algorithm_ = Algorithm::kEd25519;
  std::string keyid_;
  std::shared_ptr<const Material> material_;
};

// A key a verifier holds. Read from a key file's text: an Ed25519 public key in PEM
// (`openssl pkey -in key.pem -pubout`), an Ed25519 private key (its public half is used), or an
// HMAC secret as above. Its keyid is derived as SigningKey's.
class VerifyingKey {
 public:
  static Result<VerifyingKey> FromText(std::string_view text);

  Algorithm algorithm() const { return algorithm_; }
  const std::string& keyid() const { return keyid_; }
  // Whether `signature` is this key's over `base` (HMAC compared in constant time).
  bool Verify(std::string_view base, std::string_view signature) const;

  struct Material;

 private:
  VerifyingKey() = default;
  Algorithm algorithm_ = Algorithm::kEd25519;
  std::string keyid_;
  std::shared_ptr<const Material> material_;
};

}  // namespace settle::signing
