#pragma once

#include <string>

#include "settle/app/server_config.h"

namespace settle::app {

struct CommandLine {
  ServerConfig config;
  // Set for --help (code 0) and for invalid arguments (code 2): print `output` and exit.
  bool exit_now = false;
  int exit_code = 0;
  std::string output;
};

// Parses settled's arguments (CLI11). Never throws and never exits the process.
//
// --config FILE reads options from a TOML file (keys are the long flag names without their
// dashes: `port = 8080`, `retry-interval = "2s"`, `read-token = ["...", "..."]`); options on
// the command line override the file, and a key that names no option is refused (exit 2).
// --version prints VersionLine("settled", build); --dump-config prints the configuration
// that would run, as a commented TOML file, and exits 0 (--otlp-header's values redacted: its
// line names the headers only, commented out).
CommandLine ParseCommandLine(int argc, const char* const* argv, const BuildInfo& build = {});

}  // namespace settle::app
