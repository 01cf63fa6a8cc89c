#include "settle/signing/keys.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <algorithm>
#include <optional>

#include "settle/core/base64.h"
#include "settle/core/file_text.h"
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

constexpr std::string_view kPemBegin = "-----BEGIN";
constexpr std::string_view kSecretPrefix = "hmac:";
constexpr std::string_view kMakeSecret = "echo \"hmac:$(openssl rand -base64 32)\"";

// What a key file may hold, said in every refusal.
std::string Expected(bool want_private) {
  return std::string(want_private ? "expected an Ed25519 private key in PEM (openssl genpkey "
                                    "-algorithm ed25519) or a shared secret declared as "
                                    "hmac:<base64 of 32 bytes or more> ("
                                  : "expected an Ed25519 public key in PEM (openssl pkey "
                                    "-pubout), or its private key, or a shared secret declared "
                                    "as hmac:<base64 of 32 bytes or more> (") +
         std::string(kMakeSecret) + ")";
}

Status Refuse(std::string_view reason, bool want_private) {
  return Status::InvalidArgument(std::string(reason) + "; " + Expected(want_private));
}

std::string WithoutLineBreaks(std::string_view text) {
  std::string joined;
  joined.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r') joined += c;
  }
  return joined;
}

// Base64 decoded into memory that is wiped; nullopt when `text` (line breaks between lines
// allowed) is not base64.
std::optional<SecretBytes> DecodeSecret(std::string_view text) {
  std::string joined = WithoutLineBreaks(text);
  std::optional<std::string> decoded = Base64Decode(joined);
  OPENSSL_cleanse(joined.data(), joined.size());
  if (!decoded) return std::nullopt;
  return SecretBytes(std::move(*decoded));
}

// The first PEM block's label: "PRIVATE KEY" for "-----BEGIN PRIVATE KEY-----".
std::string_view PemLabel(std::string_view text) {
  text.remove_prefix(kPemBegin.size());
  return Trim(text.substr(0, text.find("-----")));
}

// The refusal of a block that is not a key: it names the label when it reads as one
// ("CERTIFICATE"), never text of any other kind.
std::string NotAKey(std::string_view label) {
  const bool plain =
      !label.empty() && label.size() <= 40 && std::all_of(label.begin(), label.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ';
      });
  return plain
             ? "the PEM block is labelled " + std::string(label) + ", not PRIVATE KEY or PUBLIC KEY"
             : "the PEM block's label is not PRIVATE KEY or PUBLIC KEY";
}

Result<Pkey> ReadPem(std::string_view text, bool is_private, bool want_private) {
  std::unique_ptr<BIO, BioDeleter> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) return Status::Internal("OpenSSL cannot allocate a memory BIO");
  EVP_PKEY* key = is_private
                      ? PEM_read_bio_PrivateKey(bio.get(), nullptr, RefusePassphrase, nullptr)
                      : PEM_read_bio_PUBKEY(bio.get(), nullptr, RefusePassphrase, nullptr);
  if (key == nullptr) {
    return Refuse(is_private ? "the PEM private key cannot be read (damaged or cut short)"
                             : "the PEM public key cannot be read (damaged or cut short)",
                  want_private);
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
// from a public key or from a private key's public half. Only the labels OpenSSL writes for
// unencrypted PKCS #8 and SubjectPublicKeyInfo are read.
Result<LoadedKey> LoadPem(std::string_view text, bool want_private) {
  const std::string_view label = PemLabel(text);
  if (label == "ENCRYPTED PRIVATE KEY") {
    return Refuse("the PEM block is an encrypted private key, which Settle does not read",
                  want_private);
  }
  const bool is_private = label == "PRIVATE KEY";
  const bool is_public = label == "PUBLIC KEY";
  if (!is_private && !is_public) {
    return Refuse(NotAKey(label), want_private);
  }
  if (want_private && is_public) {
    return Refuse("the PEM block is a public key, which cannot sign", want_private);
  }

  Result<Pkey> key = ReadPem(text, is_private, want_private);
  if (!key) return key.status();
  if (EVP_PKEY_id(key->get()) != EVP_PKEY_ED25519) {
    return Refuse("the PEM key is not an Ed25519 key", want_private);
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

// The DER prefixes of an Ed25519 SubjectPublicKeyInfo and of an Ed25519 PKCS #8 private key,
// each up to the raw key's 32 bytes (RFC 8410 §4, §7).
constexpr std::string_view kEd25519PublicDer{"\x30\x2a\x30\x05\x06\x03\x2b\x65\x70\x03\x21\x00",
                                             12};
constexpr std::string_view kEd25519PrivateDer{
    "\x30\x2e\x02\x01\x00\x30\x05\x06\x03\x2b\x65\x70\x04\x22\x04\x20", 16};

// "public" or "private" when `der` is an Ed25519 key's DER (a PEM block's body, decoded);
// empty otherwise.
std::string_view Ed25519DerKind(const std::string& der) {
  if (der.size() == kEd25519PublicDer.size() + kEd25519KeySize &&
      der.starts_with(kEd25519PublicDer)) {
    return "public";
  }
  if (der.size() == kEd25519PrivateDer.size() + kEd25519KeySize &&
      der.starts_with(kEd25519PrivateDer)) {
    return "private";
  }
  return "";
}

// A shared secret, the base64 after "hmac:": at least 32 bytes decoded.
Result<LoadedKey> LoadSecret(std::string_view base64, bool want_private) {
  base64 = Trim(base64);
  if (base64.empty()) return Refuse("no secret follows hmac:", want_private);
  std::optional<SecretBytes> secret = DecodeSecret(base64);
  if (!secret) return Refuse("the secret after hmac: is not base64", want_private);
  if (!Ed25519DerKind(secret->bytes()).empty()) {
    // Whoever holds the public key would hold the secret.
    return Refuse(
        "the secret after hmac: is the base64 body of an Ed25519 key, which is no shared secret",
        want_private);
  }
  if (secret->bytes().size() < kMinSecretSize) {
    return Refuse("the secret after hmac: is " + std::to_string(secret->bytes().size()) +
                      " bytes, fewer than the 32 needed",
                  want_private);
  }
  LoadedKey loaded;
  loaded.algorithm = Algorithm::kHmacSha256;
  loaded.keyid = KeyId(Algorithm::kHmacSha256, secret->bytes());
  loaded.secret = std::move(*secret);
  return loaded;
}

// Why text that is neither PEM nor declared a secret is refused. Bare base64 was once read as
// a shared secret; then a public key's body without its -----BEGIN/-----END lines became a
// secret that everyone holding the public key knew. The refusal names what the text is.
Status RefuseUndeclared(std::string_view text, bool want_private) {
  std::optional<SecretBytes> decoded = DecodeSecret(text);
  if (!decoded) {
    return Refuse("the file is neither a PEM key nor a shared secret declared with hmac:",
                  want_private);
  }
  const std::string_view kind = Ed25519DerKind(decoded->bytes());
  if (kind == "public") {
    return Refuse(
        "the file holds the base64 body of an Ed25519 public key without its -----BEGIN PUBLIC "
        "KEY----- and -----END PUBLIC KEY----- lines",
        want_private);
  }
  if (kind == "private") {
    return Refuse(
        "the file holds the base64 body of an Ed25519 private key without its -----BEGIN "
        "PRIVATE KEY----- and -----END PRIVATE KEY----- lines",
        want_private);
  }
  return Refuse(
      "the file holds bare base64, which is no key: a shared secret must be declared with "
      "hmac:, and a PEM key keeps its -----BEGIN and -----END lines",
      want_private);
}

Result<LoadedKey> Load(std::string_view text, bool want_private) {
  ClearOpenSslErrors clear;
  text = Trim(text);
  if (text.empty()) return Refuse("the file is empty", want_private);
  if (text.size() > kMaxKeyText) return Refuse("the file is too large for a key", want_private);
  if (text.starts_with(kPemBegin)) return LoadPem(text, want_private);
  if (text.starts_with(kSecretPrefix)) {
    return LoadSecret(text.substr(kSecretPrefix.size()), want_private);
  }
  return RefuseUndeclared(text, want_private);
}

template <typename Key>
Result<Key> KeyFromFile(const std::string& path) {
  Result<std::string> text = ReadFileText(path);
  if (!text) return Status::InvalidArgument(text.status().message());
  const SecretBytes wiped(std::move(*text));
  Result<Key> key = Key::FromText(wiped.bytes());
  if (!key) return Status::InvalidArgument(path + ": " + key.status().message());
  return key;
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

Result<SigningKey> SigningKey::FromFile(const std::string& path) {
  return KeyFromFile<SigningKey>(path);
}

Result<VerifyingKey> VerifyingKey::FromFile(const std::string& path) {
  return KeyFromFile<VerifyingKey>(path);
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

namespace {

std::string Describe(Algorithm algorithm, const std::string& keyid) {
  return std::string(AlgorithmName(algorithm)) + " " + keyid;
}

}  // namespace

std::string DescribeKey(const SigningKey& key) { return Describe(key.algorithm(), key.keyid()); }

std::string DescribeKey(const VerifyingKey& key) { return Describe(key.algorithm(), key.keyid()); }

std::string DescribeKeys(const std::vector<VerifyingKey>& keys) {
  if (keys.empty()) return "no key";
  std::string out;
  for (const VerifyingKey& key : keys) {
    if (!out.empty()) out += ", ";
    out += DescribeKey(key);
  }
  return out;
}

}  // namespace settle::signing
