#include "settle/sdk/request_fingerprint.h"

#include <openssl/evp.h>

#include <array>
#include <initializer_list>
#include <memory>
#include <stdexcept>

namespace settle::sdk {

std::string HexDigits(const unsigned char* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

namespace {

// The hex SHA-256 of the parts, joined by '\n'.
std::string Sha256Of(std::initializer_list<std::string_view> parts) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  bool first = true;
  for (std::string_view part : parts) {
    if (!first) ok = ok && EVP_DigestUpdate(ctx.get(), "\n", 1) == 1;
    ok = ok && EVP_DigestUpdate(ctx.get(), part.data(), part.size()) == 1;
    first = false;
  }
  ok = ok && EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) == 1;
  // Only an allocation failure gets here: the guard answers it like a handler that threw.
  if (!ok) throw std::runtime_error("idempotency: SHA-256 failed");
  return HexDigits(digest.data(), size);
}

}  // namespace

std::string Sha256Hex(std::string_view data) { return Sha256Of({data}); }

std::string RequestFingerprint(std::string_view method, std::string_view path,
                               std::string_view body) {
  return Sha256Of({method, path, body});
}

}  // namespace settle::sdk
