#pragma once

#include <string>
#include <string_view>

namespace settle {

// Case rules of the protocols Settle speaks (HTTP field names, URL schemes, gRPC metadata
// keys, RFC 9421 components): ASCII letters only, whatever the locale. Bytes outside A-Z and
// a-z are left as they are.

constexpr char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char AsciiUpper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

// The value of a hex digit: 0-9 for '0'-'9', 10-15 for 'a'-'f' and 'A'-'F'; -1 for any other
// byte.
constexpr int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The same for lower-case digits only ('A'-'F' give -1), as W3C Trace Context writes its ids.
constexpr int LowerHexDigitValue(char c) { return c >= 'A' && c <= 'F' ? -1 : HexDigitValue(c); }

// `text` with A-Z lowercased, or a-z uppercased.
std::string AsciiLowercase(std::string_view text);
std::string AsciiUppercase(std::string_view text);

// Whether `a` and `b` are equal but for the case of ASCII letters.
bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b);

// Whether `text` starts with `prefix` but for the case of ASCII letters.
bool StartsWithIgnoreAsciiCase(std::string_view text, std::string_view prefix);

}  // namespace settle
