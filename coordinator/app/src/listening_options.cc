// The options of --help's "Listening" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <string>

namespace settle::app {

void AddListeningOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kListening);
  app.add_option("--host", c.host, "Address to listen on")->capture_default_str();
  app.add_option("--port", c.port, "Port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option_function<int>(
         "--grpc-port",
         [&c](int port) {
           c.grpc.enabled = port != 0;
           c.grpc.port = port;
         },
         "Port of DTM's gRPC API (dtmgimp.Dtm), on --host, with the same TLS files and tokens "
         "(0: off)")
      ->check(CLI::Range(0, 65535))
      ->default_str(std::to_string(c.grpc.port));
}

}  // namespace settle::app
