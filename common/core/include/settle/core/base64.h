#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace settle {

// `bytes` in RFC 4648 §4 base64, with "=" padding.
std::string Base64Encode(std::string_view bytes);

// The bytes RFC 4648 §4 base64 `text` stands for. The "=" padding may be left out and non-zero
// pad bits are ignored (RFC 8941 §4.2.7 asks a parser to tolerate both); nullopt for a
// character outside the alphabet, padding anywhere but at the end, or a length no base64 text
// has.
std::optional<std::string> Base64Decode(std::string_view text);

// Whether `c` may appear in base64 text (the 64 characters and "=").
bool IsBase64Char(char c);

// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF): text that JSON can carry as it is.
bool IsValidUtf8(std::string_view bytes);

}  // namespace settle
