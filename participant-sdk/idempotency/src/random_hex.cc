#include "random_hex.h"

#include <openssl/rand.h>

#include <vector>

#include "settle/sdk/request_fingerprint.h"

namespace settle::sdk {

Result<std::string> RandomHex(std::size_t bytes) {
  std::vector<unsigned char> random(bytes);
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return Status::Unavailable("the random generator failed");
  }
  return HexDigits(random.data(), random.size());
}

}  // namespace settle::sdk
