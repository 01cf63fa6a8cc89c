#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace settle::testing {

// Bytes that never repeat in a way a cut, a lost record or a swap could hide: each byte comes
// from a 64-bit generator (splitmix64) seeded by `seed`, so every offset of every body holds
// its own value and two bodies of different seeds differ. The same size and seed always give
// the same bytes, so a test can compare what arrived with what was sent.
inline std::string PatternBytes(std::size_t size, std::uint64_t seed) {
  std::string bytes(size, '\0');
  std::uint64_t state = seed;
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (i % 8 == 0) {
      state += 0x9e3779b97f4a7c15ull;
      word = state;
      word = (word ^ (word >> 30)) * 0xbf58476d1ce4e5b9ull;
      word = (word ^ (word >> 27)) * 0x94d049bb133111ebull;
      word ^= word >> 31;
    }
    bytes[i] = static_cast<char>((word >> (8 * (i % 8))) & 0xff);
  }
  return bytes;
}

// PatternBytes as text that fits a JSON string or a query unescaped: each byte mapped onto
// the 64 characters [A-Za-z0-9-_].
inline std::string PatternText(std::size_t size, std::uint64_t seed) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string text = PatternBytes(size, seed);
  for (char& c : text) c = kAlphabet[static_cast<unsigned char>(c) % kAlphabet.size()];
  return text;
}

// Where two byte strings first differ (the shorter one's size when one is a prefix of the
// other); npos when they are equal. For a failing check's message.
inline std::size_t FirstDifference(std::string_view a, std::string_view b) {
  const std::size_t common = a.size() < b.size() ? a.size() : b.size();
  for (std::size_t i = 0; i < common; ++i) {
    if (a[i] != b[i]) return i;
  }
  return a.size() == b.size() ? std::string_view::npos : common;
}

}  // namespace settle::testing
