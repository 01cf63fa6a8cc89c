#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"

namespace settle::signing {

// The two algorithms of RFC 9421 §3.3 that Settle uses, through OpenSSL: "ed25519" (a private
// key signs, its public key verifies) and "hmac-sha256" (one shared secret does both).
enum class Algorithm { kEd25519, kHmacSha256 };

// "ed25519" or "hmac-sha256", the alg parameter's value.
std::string_view AlgorithmName(Algorithm algorithm);

// Key files. A key file says what it holds; nothing is guessed from its look:
//   an Ed25519 private key in PEM (PKCS #8, "-----BEGIN PRIVATE KEY-----", as
//     `openssl genpkey -algorithm ed25519` writes it);
//   an Ed25519 public key in PEM ("-----BEGIN PUBLIC KEY-----", `openssl pkey -pubout`), for a
//     verifier only;
//   a shared secret for HMAC-SHA256, declared as such: "hmac:" and the secret's base64 (line
//     breaks within it allowed), at least 32 bytes decoded, as
//     `echo "hmac:$(openssl rand -base64 32)" > secret.key` writes it.
// Blanks around the text are ignored. Anything else is refused with InvalidArgument saying
// what the text is taken for and what was expected, never quoting it: bare base64 (a secret
// without "hmac:", or a PEM key's body without its -----BEGIN/-----END lines, which would
// otherwise turn a public key into a shared secret), a PEM block that is not one of those
// keys (a certificate, an encrypted or another algorithm's key, a damaged or truncated block),
// a public key where a private one is needed, empty text, anything else.
//
// A key's keyid is derived from the key, so that a verifier's copy of the same key finds it:
// "ed25519-" or "hmac-" and the first 16 hex digits of SHA-256 over the raw public key (32
// bytes) or the secret.

// The key a signer holds: an Ed25519 private key or a shared secret.
class SigningKey {
 public:
  // InvalidArgument saying what is wrong with the text and what was expected.
  static Result<SigningKey> FromText(std::string_view text);
  // The key in the file at `path`: InvalidArgument whose message starts with the path (or
  // "cannot read <path>: <the system's reason>"), followed by FromText's reason.
  static Result<SigningKey> FromFile(const std::string& path);

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

// A key a verifier holds: an Ed25519 public key, or a private key (its public half is kept),
// or a shared secret.
class VerifyingKey {
 public:
  static Result<VerifyingKey> FromText(std::string_view text);
  static Result<VerifyingKey> FromFile(const std::string& path);

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

// "ed25519 ed25519-0123456789abcdef": a key's algorithm and keyid, for a log line (nothing of
// the key's material).
std::string DescribeKey(const SigningKey& key);
std::string DescribeKey(const VerifyingKey& key);
// Each key described as DescribeKey does, joined by ", "; "no key" for none.
std::string DescribeKeys(const std::vector<VerifyingKey>& keys);

}  // namespace settle::signing
