#include "settle/core/log_text.h"

namespace settle {
namespace {

constexpr char kHex[] = "0123456789abcdef";

bool IsControl(unsigned char u) { return u < 0x20 || u == 0x7f; }

// Appends the escape of a byte that is not written as itself.
void AppendEscaped(std::string& out, unsigned char u) {
  switch (u) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0x0f];
  }
}

}  // namespace

std::string LogValue(std::string_view value, std::size_t max) {
  const std::string_view shown = value.substr(0, max);
  std::string out;
  out.reserve(shown.size() + 2);
  out += '"';
  for (char c : shown) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      AppendEscaped(out, u);
    }
  }
  out += '"';
  if (value.size() > max) out += "...(" + std::to_string(value.size()) + " bytes)";
  return out;
}

bool HasControlBytes(std::string_view line) {
  for (char c : line) {
    if (IsControl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

std::string EscapeControlBytes(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (IsControl(u)) {
      AppendEscaped(out, u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace settle
