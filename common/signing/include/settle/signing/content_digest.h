#pragma once

#include <string>
#include <string_view>

namespace settle::signing {

// RFC 9530's Content-Digest field value for `body` with SHA-256: "sha-256=:<base64>:" (an empty
// body has one too).
std::string ContentDigestSha256(std::string_view body);

}  // namespace settle::signing
