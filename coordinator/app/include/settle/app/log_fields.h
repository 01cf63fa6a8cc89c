#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace settle::app {

// One `key=value` of a log message: "gid=order-1", "attempts=3", `reason="out of stock"`.
struct LogField {
  std::string key;
  std::string value;  // a quoted value unescaped (LogValue's escapes undone)
  bool quoted = false;
};

// The `key=value` fields of a log message as settled writes them, in order, for a log format
// that carries them apart (--log-format json). A key is lower case letters, digits and '_'
// (starting with a letter) right after the message's start, a blank or '('; its value is a
// double-quoted string as LogValue writes it (escapes undone; a cut one keeps its "...(N
// bytes)" mark outside the quotes and ends in "...") or else the run of bytes up to the next
// blank, less a trailing ',', ';' or ')'. Text in double quotes that is not a key's value is
// skipped whole, so that a value from outside (quoted by LogValue) never yields a field of its
// own. A key seen twice keeps its first value.
std::vector<LogField> ParseLogFields(std::string_view message);

}  // namespace settle::app
