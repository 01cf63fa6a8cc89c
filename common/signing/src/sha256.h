#pragma once

#include <string>
#include <string_view>

namespace settle::signing::detail {

// The 32 bytes of SHA-256 over `bytes` (OpenSSL's libcrypto).
std::string Sha256(std::string_view bytes);

}  // namespace settle::signing::detail
