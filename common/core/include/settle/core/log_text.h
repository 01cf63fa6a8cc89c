#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace settle {

// What a log line may hold of a string that came from outside (a client's reason, URL, topic
// or path, a participant's answer): a log reader must be able to tell where such a value
// ends, and no value may start a line of its own or pose as another field of the line.

// The longest value LogValue writes whole; a longer one is cut.
inline constexpr std::size_t kMaxLogValue = 256;

// `value` as one token of a log line, in double quotes: '"' and '\' are escaped with '\', a
// newline, carriage return and tab as \n, \r, \t, and every other byte outside printable ASCII
// as \xHH (UTF-8 too: a log line is ASCII). Past `max` bytes the value is cut and the quote is
// followed by "...(N bytes)", N its whole length. The empty value is "".
std::string LogValue(std::string_view value, std::size_t max = kMaxLogValue);

// `line` with every control byte (below 0x20, and 0x7f) written \n, \r, \t or \xHH, and
// nothing else changed: what the log sink applies to each whole message, so that no call site
// (a library's error text included) can write a line of its own. Returns `line` itself when it
// has none (the common case copies nothing more than the call).
std::string EscapeControlBytes(std::string_view line);
// Whether `line` holds a byte that EscapeControlBytes would change.
bool HasControlBytes(std::string_view line);

}  // namespace settle
