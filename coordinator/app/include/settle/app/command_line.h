#pragma once

#include <string>

#include "settle/app/server_config.h"

namespace settle::coordinator {

struct CommandLine {
  ServerConfig config;
  // Set for --help (code 0) and for invalid arguments (code 2): print `output` and exit.
  bool exit_now = false;
  int exit_code = 0;
  std::string output;
};

// Parses settled's arguments (CLI11). Never throws and never exits the process.
CommandLine ParseCommandLine(int argc, const char* const* argv);

}  // namespace settle::coordinator
