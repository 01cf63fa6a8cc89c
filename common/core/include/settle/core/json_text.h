#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Writing JSON text directly, for the hot paths whose documents have a fixed shape (a stored
// transaction's options): no document tree, no allocation but the output's. Strings are written
// as nlohmann::json's dump() writes them, so that text written here and text written there are
// the same bytes: '"' and '\\' escaped, \b \t \n \f \r, every other byte below 0x20 as \u00xx,
// and UTF-8 as it is.
namespace settle {

// Appends `text` as a JSON string, quotes included. False, and `out` unchanged, when `text` is
// not well-formed UTF-8 (IsValidUtf8), which JSON cannot carry.
bool AppendJsonString(std::string& out, std::string_view text);

// Appends `n` in decimal.
void AppendJsonNumber(std::string& out, std::int64_t n);

}  // namespace settle
