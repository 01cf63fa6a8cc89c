#pragma once

#include <string_view>

namespace settle::signing::testing {

// RFC 9421 Appendix B.1.4, test-key-ed25519: the private key (PKCS #8) and its public key.
inline constexpr std::string_view kRfcEd25519Private =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n"
    "-----END PRIVATE KEY-----\n";
inline constexpr std::string_view kRfcEd25519Public =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n"
    "-----END PUBLIC KEY-----\n";
// Its keyid as Settle derives it: the first 16 hex digits of SHA-256 over the raw public key
// (computed with `openssl pkey -pubout -outform DER | tail -c 32 | openssl dgst -sha256`).
inline constexpr std::string_view kRfcEd25519KeyId = "ed25519-b16c2d1bead12626";

// RFC 9421 Appendix B.1.5, test-shared-secret: 64 bytes in base64, as a key file declares a
// shared secret ("hmac:" and the base64).
inline constexpr std::string_view kRfcSharedSecret =
    "hmac:uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==";
inline constexpr std::string_view kRfcSharedSecretKeyId = "hmac-57ca14d520f889be";

}  // namespace settle::signing::testing
