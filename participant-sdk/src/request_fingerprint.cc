#include "settle/sdk/request_fingerprint.h"

#include <openssl/evp.h>

#include <array>
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

std::string RequestFingerprint(std::string_view method, std::string_view path,
                               std::string_view body) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  const bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx.get(), method.data(), method.size()) == 1 &&
                  EVP_DigestUpdate(ctx.get(), "\n", 1) == 1 &&
                  EVP_DigestUpdate(ctx.get(), path.data(), path.size()) == 1 &&
                  EVP_DigestUpdate(ctx.get(), "\n", 1) == 1 &&
                  EVP_DigestUpdate(ctx.get(), body.data(), body.size()) == 1 &&
                  EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) == 1;
  // Only an allocation failure gets here: the guard answers it like a handler that threw.
  if (!ok) throw std::runtime_error("idempotency: SHA-256 failed");
  return HexDigits(digest.data(), size);
}

}  // namespace settle::sdk
