#pragma once

#include <functional>
#include <string_view>

#include "settle/core/status.h"

namespace settle {

// `text` without the blanks (spaces, tabs, carriage returns) at either end.
std::string_view TrimBlanks(std::string_view text);

// The lines of a configuration file settled reads (tokens, client certificates, OTLP headers):
// calls `read` with each line that says something, trimmed (TrimBlanks: a CRLF file reads as
// an LF one), skipping blank lines and '#' comment lines. The first line `read` refuses ends
// the walk: InvalidArgument "line N: <its message>", N counted from 1.
Status ForEachConfigLine(std::string_view text,
                         const std::function<Status(std::string_view line)>& read);

}  // namespace settle
