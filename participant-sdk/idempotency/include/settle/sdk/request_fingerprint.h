#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace settle::sdk {

// Lowercase hex digits of `size` bytes.
std::string HexDigits(const unsigned char* bytes, std::size_t size);

// The lowercase hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// What tells two requests with one Idempotency-Key apart: the lowercase hex SHA-256 of
// "method\npath\nbody". The query and the header fields are left out (a client's retry may
// differ in them without meaning another request).
std::string RequestFingerprint(std::string_view method, std::string_view path,
                               std::string_view body);

}  // namespace settle::sdk
