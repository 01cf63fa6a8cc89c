#include "settle/signing/keys.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <algorithm>
#include <optional>

#include "settle/core/base64.h"
#include "sha256.h"

namespace settle::signing {
namespace {

constexpr std::size_t kEd25519KeySize = 32;
constexpr std::size_t kEd25519SignatureSize = 64;
constexpr std::size_t kHmacSha256Size = 32;
constexpr std::size_t kMinSecretSize = 32;
// Far beyond any key file; a bound on what is handed to OpenSSL's BIO (an int size).
constexpr std::size_t kMaxKeyText = 1 << 20;

// Empties OpenSSL's error queue of this thread when it goes out of scope, so that a failed
// read or verification leaves nothing behind for the next OpenSSL call (a TLS handshake reads
// that queue).
struct ClearOpenSslErrors {
  ClearOpenSslErrors() = default;
  ClearOpenSslErrors(const ClearOpenSslErrors&) = delete;
  ClearOpenSslErrors& operator=(const ClearOpenSslErrors&) = delete;
  ~ClearOpenSslErrors() { ERR_clear_error(); }
};

struct PkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// A secret wiped from memory when it is dropped.
class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(std::string bytes) : bytes_(std::move(bytes)) {}
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;
  SecretBytes(SecretBytes&& other) noexcept : bytes_(std::move(other.bytes_)) { other.Wipe(); }
  SecretBytes& operator=(SecretBytes&& other) noexcept {
    if (this != &other) {
      Wipe();
      bytes_ = std::move(other.bytes_);
      other.Wipe();
    }
    return *this;
  }
  ~SecretBytes() { Wipe(); }

  const std::string& bytes() const { return bytes_; }

 private:
  void Wipe() {
    if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
    bytes_.clear();
  }
  std::string bytes_;
};

// PEM reading must never ask a terminal for a passphrase: an encrypted key is refused.
int RefusePassphrase(char* /*buffer*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return -1; }

std::string_view Trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string HexPrefix(std::string_view bytes, std::size_t digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char byte : bytes) {
    if (out.size() >= digits) break;
    const auto u = static_cast<unsigned char>(byte);
    out += kHex[u >> 4];
    out += kHex[u & 0x0f];
  }
  out.resize(std::min(out.size(), digits));
  return out;
}

std::string KeyId(Algorithm algorithm, std::string_view key_bytes) {
  return std::string(algorithm == Algorithm::kEd25519 ? "ed25519-" : "hmac-") +
         HexPrefix(detail::Sha256(key_bytes), 16);
}

// What a key file holds, read.
struct LoadedKey {
  Algorithm algorithm = Algorithm::kEd25519;
  Pkey pkey;           // Ed25519
  SecretBytes secret;  // HMAC-SHA256
  std::string keyid;
};

bool IsPem(std::string_view text) { return text.starts_with("-----BEGIN"); }

// The first PEM block's label: "PRIVATE KEY" for "-----BEGIN PRIVATE KEY-----".
std::string_view PemLabel(std::string_view text) {
  text.remove_prefix(std::string_view("-----BEGIN").size());
  return Trim(text.substr(0, text.find("-----")));
}

Result<Pkey> ReadPem(std::string_view text, bool want_private) {
  std::unique_ptr<BIO, BioDeleter> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) return Status::Internal("OpenSSL cannot allocate a memory BIO");
  EVP_PKEY* key = want_private
                      ? PEM_read_bio_PrivateKey(bio.get(), nullptr, RefusePassphrase, nullptr)
                      : PEM_read_bio_PUBKEY(bio.get(), nullptr, RefusePassphrase, nullptr);
  if (key == nullptr) {
    return Status::InvalidArgument(want_private ? "the PEM private key cannot be read"
                                                : "the PEM public key cannot be read");
  }
  return Pkey(key);
}

Result<std::string> RawPublicKey(EVP_PKEY* key) {
  std::string raw(kEd25519KeySize, '\0');
  std::size_t size = raw.size();
  if (EVP_PKEY_get_raw_public_key(key, reinterpret_cast<unsigned char*>(raw.data()), &size) != 1 ||
      size != kEd25519KeySize) {
    return Status::InvalidArgument("the Ed25519 key's public half cannot be read");
  }
  return raw;
}

// An Ed25519 key from a PEM block: a private key when `want_private`; otherwise a public one,
// from a public key or from a private key's public half.
Result<LoadedKey> LoadPem(std::string_view text, bool want_private) {
  const std::string_view label = PemLabel(text);
  if (label.find("ENCRYPTED") != std::string_view::npos) {
    return Status::InvalidArgument(
        "the private key is encrypted: Settle reads unencrypted PKCS #8 keys (openssl genpkey "
        "-algorithm ed25519)");
  }
  const bool is_private = label.find("PRIVATE KEY") != std::string_view::npos;
  const bool is_public = label.find("PUBLIC KEY") != std::string_view::npos;
  if (want_private && !is_private) {
    return Status::InvalidArgument(
        is_public ? "the PEM block is a public key; signing needs the Ed25519 private key"
                  : "the PEM block is not a key");
  }
  if (!is_private && !is_public) return Status::InvalidArgument("the PEM block is not a key");

  Result<Pkey> key = ReadPem(text, is_private);
  if (!key) return key.status();
  if (EVP_PKEY_id(key->get()) != EVP_PKEY_ED25519) {
    return Status::InvalidArgument("the PEM key is not an Ed25519 key");
  }
  Result<std::string> raw = RawPublicKey(key->get());
  if (!raw) return raw.status();

  LoadedKey loaded;
  loaded.algorithm = Algorithm::kEd25519;
  loaded.keyid = KeyId(Algorithm::kEd25519, *raw);
  if (is_private && !want_private) {
    // A verifier keeps only the public half.
    EVP_PKEY* public_key = EVP_PKEY_new_raw_public_key(
        EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(raw->data()),
        raw->size());
    if (public_key == nullptr) {
      return Status::InvalidArgument("the Ed25519 key's public half cannot be read");
    }
    loaded.pkey = Pkey(public_key);
  } else {
    loaded.pkey = std::move(*key);
  }
  return loaded;
}

// An HMAC secret: base64 (line breaks between lines allowed), at least 32 bytes decoded.
Result<LoadedKey> LoadSecret(std::string_view text) {
  std::string joined;
  joined.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r') joined += c;
  }
  std::optional<std::string> decoded = Base64Decode(joined);
  OPENSSL_cleanse(joined.data(), joined.size());
  if (!decoded) {
    return Status::InvalidArgument(
        "the key file is neither a PEM key nor base64 text (an HMAC secret)");
  }
  SecretBytes secret(std::move(*decoded));
  if (secret.bytes().size() < kMinSecretSize) {
    return Status::InvalidArgument("the HMAC secret is " + std::to_string(secret.bytes().size()) +
                                   " bytes; at least 32 are needed (openssl rand -base64 32)");
  }
  LoadedKey loaded;
  loaded.algorithm = Algorithm::kHmacSha256;
  loaded.keyid = KeyId(Algorithm::kHmacSha256, secret.bytes());
  loaded.secret = std::move(secret);
  return loaded;
}

Result<LoadedKey> Load(std::string_view text, bool want_private) {
  ClearOpenSslErrors clear;
  text = Trim(text);
  if (text.empty()) return Status::InvalidArgument("the key file is empty");
  if (text.size() > kMaxKeyText) return Status::InvalidArgument("the key file is too large");
  if (IsPem(text)) return LoadPem(text, want_private);
  return LoadSecret(text);
}

}  // namespace

struct KeyMaterial {
  Pkey pkey;
  SecretBytes secret;
};
struct SigningKey::Material : KeyMaterial {};
struct VerifyingKey::Material : KeyMaterial {};

std::string_view AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kEd25519:
      return "ed25519";
    case Algorithm::kHmacSha256:
      return "hmac-sha256";
  }
  return "unknown";
}

namespace {

template <typename MaterialT>
std::shared_ptr<const MaterialT> MakeMaterial(LoadedKey& loaded) {
  auto material = std::make_shared<MaterialT>();
  material->pkey = std::move(loaded.pkey);
  material->secret = std::move(loaded.secret);
  return material;
}

Result<std::string> HmacSha256(const std::string& secret, std::string_view data) {
  std::string mac(kHmacSha256Size, '\0');
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(),
           reinterpret_cast<unsigned char*>(mac.data()), &size) == nullptr ||
      size != kHmacSha256Size) {
    return Status::Internal("OpenSSL cannot compute HMAC-SHA256");
  }
  return mac;
}

}  // namespace

Result<SigningKey> SigningKey::FromText(std::string_view text) {
  Result<LoadedKey> loaded = Load(text, /*want_private=*/true);
  if (!loaded) return loaded.status();
  SigningKey key;
  key.algorithm_ = loaded->algorithm;
  key.keyid_ = loaded->keyid;
  key.material_ = MakeMaterial<Material>(*loaded);
  return key;
}

Result<std::string> SigningKey::Sign(std::string_view base) const {
  ClearOpenSslErrors clear;
  if (algorithm_ == Algorithm::kHmacSha256) return HmacSha256(material_->secret.bytes(), base);

  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  std::string signature(kEd25519SignatureSize, '\0');
  std::size_t size = signature.size();
  // Ed25519 hashes the message itself: no digest is named.
  if (!ctx ||
      EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, material_->pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(base.data()), base.size()) != 1 ||
      size != kEd25519SignatureSize) {
    return Status::Internal("OpenSSL cannot sign with the Ed25519 key " + keyid_);
  }
  return signature;
}

Result<VerifyingKey> VerifyingKey::FromText(std::string_view text) {
  Result<LoadedKey> loaded = Load(text, /*want_private=*/false);
  if (!loaded) return loaded.status();
  VerifyingKey key;
  key.algorithm_ = loaded->algorithm;
  key.keyid_ = loaded->keyid;
  key.material_ = MakeMaterial<Material>(*loaded);
  return key;
}

bool VerifyingKey::Verify(std::string_view base, std::string_view signature) const {
  ClearOpenSslErrors clear;
  if (algorithm_ == Algorithm::kHmacSha256) {
    Result<std::string> expected = HmacSha256(material_->secret.bytes(), base);
    return expected && signature.size() == expected->size() &&
           CRYPTO_memcmp(signature.data(), expected->data(), expected->size()) == 0;
  }
  if (signature.size() != kEd25519SignatureSize) return false;
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  return ctx &&
         EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, material_->pkey.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(base.data()),
                          base.size()) == 1;
}

}  // namespace settle::signing
