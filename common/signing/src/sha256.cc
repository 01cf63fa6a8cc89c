#include "sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace settle::signing::detail {

std::string Sha256(std::string_view bytes) {
  std::string digest(32, '\0');
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), reinterpret_cast<unsigned char*>(digest.data()), &size,
                 EVP_sha256(), nullptr) != 1 ||
      size != digest.size()) {
    // Only a broken libcrypto fails to hash.
    throw std::runtime_error("OpenSSL cannot compute SHA-256");
  }
  return digest;
}

}  // namespace settle::signing::detail
