#include "settle/app/log_fields.h"

#include <algorithm>

#include "settle/core/ascii.h"

namespace settle::app {
namespace {

bool IsKeyStart(char c) { return c >= 'a' && c <= 'z'; }
bool IsKeyByte(char c) { return IsKeyStart(c) || (c >= '0' && c <= '9') || c == '_'; }

// Reads the quoted string that starts at text[at] ('"'), LogValue's escapes undone, into
// `value` (if not null); returns the index just past its closing quote (text.size() when it
// has none).
std::size_t ReadQuoted(std::string_view text, std::size_t at, std::string* value) {
  ++at;
  while (at < text.size() && text[at] != '"') {
    char c = text[at++];
    if (c == '\\' && at < text.size()) {
      const char e = text[at++];
      switch (e) {
        case 'n':
          c = '\n';
          break;
        case 'r':
          c = '\r';
          break;
        case 't':
          c = '\t';
          break;
        case 'x':
          if (at + 1 < text.size() && HexDigitValue(text[at]) >= 0 &&
              HexDigitValue(text[at + 1]) >= 0) {
            c = static_cast<char>(HexDigitValue(text[at]) * 16 + HexDigitValue(text[at + 1]));
            at += 2;
          } else {
            c = 'x';
          }
          break;
        default:
          c = e;
      }
    }
    if (value != nullptr) *value += c;
  }
  return std::min(at + 1, text.size());
}

}  // namespace

std::vector<LogField> ParseLogFields(std::string_view text) {
  std::vector<LogField> fields;
  std::size_t at = 0;
  while (at < text.size()) {
    if (text[at] == '"') {
      at = ReadQuoted(text, at, nullptr);
      continue;
    }
    const bool word_start = at == 0 || text[at - 1] == ' ' || text[at - 1] == '(';
    if (!word_start || !IsKeyStart(text[at])) {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && IsKeyByte(text[end])) ++end;
    if (end >= text.size() || text[end] != '=') {
      at = end;
      continue;
    }
    LogField field;
    field.key = std::string(text.substr(at, end - at));
    at = end + 1;
    if (at < text.size() && text[at] == '"') {
      field.quoted = true;
      at = ReadQuoted(text, at, &field.value);
      // LogValue's mark of a cut value: "...(N bytes)".
      if (text.substr(at, 4) == "...(") {
        field.value += "...";
        const std::size_t close = text.find(')', at);
        at = close == std::string_view::npos ? text.size() : close + 1;
      }
    } else {
      std::size_t stop = at;
      while (stop < text.size() && text[stop] != ' ') ++stop;
      std::size_t last = stop;
      while (last > at &&
             (text[last - 1] == ',' || text[last - 1] == ';' || text[last - 1] == ')')) {
        --last;
      }
      field.value = std::string(text.substr(at, last - at));
      at = stop;
    }
    const bool seen = std::any_of(fields.begin(), fields.end(),
                                  [&](const LogField& f) { return f.key == field.key; });
    if (!seen) fields.push_back(std::move(field));
  }
  return fields;
}

}  // namespace settle::app
