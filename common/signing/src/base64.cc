#include "base64.h"

#include <cstdint>

namespace settle::signing::detail {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of a base64 character, or -1.
int SextetOf(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool IsBase64Char(char c) { return c == '=' || SextetOf(c) >= 0; }

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group =
        static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
        static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
        static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(group >> 18) & 0x3f];
    out += kAlphabet[(group >> 12) & 0x3f];
    out += kAlphabet[(group >> 6) & 0x3f];
    out += kAlphabet[group & 0x3f];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t group = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]))
                                << 16;
    out += kAlphabet[(group >> 18) & 0x3f];
    out += kAlphabet[(group >> 12) & 0x3f];
    out += "==";
  } else if (rest == 2) {
    const std::uint32_t group =
        static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
        static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(group >> 18) & 0x3f];
    out += kAlphabet[(group >> 12) & 0x3f];
    out += kAlphabet[(group >> 6) & 0x3f];
    out += '=';
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::size_t padding = 0;
  while (padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  if (padding > 2) return std::nullopt;
  // With padding, the text is whole groups of four; without, the last group may be short, but
  // never a single character (6 bits make no byte).
  if (padding > 0 && text.size() % 4 != 0) return std::nullopt;
  const std::string_view data = text.substr(0, text.size() - padding);
  if (data.size() % 4 == 1) return std::nullopt;

  std::string out;
  out.reserve(data.size() / 4 * 3 + 2);
  std::uint32_t bits = 0;
  int bit_count = 0;
  for (char c : data) {
    const int sextet = SextetOf(c);
    if (sextet < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(sextet);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out += static_cast<char>((bits >> bit_count) & 0xff);
    }
  }
  // Whatever bits are left over are pad bits: ignored.
  return out;
}

}  // namespace settle::signing::detail
