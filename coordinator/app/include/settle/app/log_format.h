#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <optional>
#include <string_view>

namespace settle::app {

// How settled writes its log lines (--log-format). Both write times in UTC, to the
// millisecond, with a 'Z'.
//   text  2026-11-28T10:12:24.601Z info gid=order-1 trans_type=saga submitted steps=2
//   json  {"time":"2026-11-28T10:12:24.601Z","level":"info","message":"gid=order-1 ...",
//          "gid":"order-1","trans_type":"saga","steps":2}
// A JSON line is one object: time, level, message (the text line's message, whole), then each
// key=value of the message (ParseLogFields) as a member of its own, a whole number as a
// number; a key named time, level or message stays in the message only. Levels are spdlog's:
// trace, debug, info, warning, error, critical.
enum class LogFormat { kText, kJson };

std::optional<LogFormat> ParseLogFormat(std::string_view name);  // "text", "json"

std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format);

}  // namespace settle::app
