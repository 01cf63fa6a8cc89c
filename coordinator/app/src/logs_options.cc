// The options of --help's "Logs" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

namespace settle::app {

void AddLogsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kLogs);
  app.add_option("--log-level", c.log_level, "trace, debug, info, warn, error, critical or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.add_option("--log-format", c.log_format,
                 "text (a line of time, level and message) or json (an object per line: time, "
                 "level, message, and each key=value of the message as a member); times in UTC")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace settle::app
