// The options of --help's "gRPC limits" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

#include "settle/core/duration_text.h"

namespace settle::app {

void AddGrpcLimitsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kGrpcLimits);
  app.add_option("--grpc-max-connections", c.grpc.max_connections,
                 "Open connections to the gRPC API beyond which a new one is closed as soon as "
                 "it is accepted: the descriptors the gRPC port may take")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--grpc-max-connections-per-peer", c.grpc.max_connections_per_peer,
                 "Open connections to the gRPC API from one IP address beyond which a new one "
                 "from it is closed at once (0: no cap of its own; at most "
                 "--grpc-max-connections)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--grpc-first-message-timeout",
         [&c](const std::string& text) {
           Result<Duration> parsed = ParseDuration(text);
           if (!parsed || parsed->count() <= 0) {
             throw CLI::ValidationError("--grpc-first-message-timeout",
                                        parsed ? "must be more than 0" : parsed.status().message());
           }
           c.grpc.first_message_timeout = *parsed;
         },
         "A gRPC call whose request message has not wholly arrived this long after its headers "
         "is ended with DEADLINE_EXCEEDED; a connection's TLS handshake and HTTP/2 settings "
         "have as long (e.g. 500ms, 3s, 1m)")
      ->default_str(FormatDuration(c.grpc.first_message_timeout));
  app.add_option("--grpc-memory-limit", c.grpc.memory_limit_bytes,
                 "Bytes the gRPC API's connections may take together: gRPC's resource quota, "
                 "and the calls that may wait for their request message at once (96 KiB each); "
                 "a call beyond them is refused with RESOURCE_EXHAUSTED")
      ->check(CLI::Range(std::size_t{1} << 20, std::size_t{64} << 30))
      ->capture_default_str();
}

}  // namespace settle::app
