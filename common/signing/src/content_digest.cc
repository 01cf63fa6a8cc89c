#include "settle/signing/content_digest.h"

#include "settle/core/base64.h"
#include "sha256.h"

namespace settle::signing {

std::string ContentDigestSha256(std::string_view body) {
  return "sha-256=:" + Base64Encode(detail::Sha256(body)) + ":";
}

}  // namespace settle::signing
