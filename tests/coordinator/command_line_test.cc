#include "settle/coordinator/command_line.h"

#include <catch2/catch.hpp>

#include <vector>

namespace settle::coordinator {
namespace {

CommandLine Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "settled");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST_CASE("settled's defaults match the protocol", "[cli]") {
  const CommandLine cl = Parse({});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.host == "127.0.0.1");
  CHECK(cl.config.port == 36789);
  CHECK(cl.config.db_path == "./data/settle.db");
  CHECK(cl.config.coordinator.retry_interval == std::chrono::seconds(1));
  CHECK(cl.config.retry.max_interval == std::chrono::seconds(60));
  CHECK(cl.config.retry.stuck_after == 10);
  CHECK(cl.config.coordinator.request_timeout == std::chrono::seconds(3));
  CHECK(cl.config.coordinator.tcc_timeout_to_fail == std::chrono::seconds(35));
  CHECK(cl.config.log_level == "info");
}

TEST_CASE("every setting can be given on the command line", "[cli]") {
  const CommandLine cl = Parse({"--host",
                                "0.0.0.0",
                                "--port",
                                "0",
                                "--db",
                                "/tmp/x.db",
                                "--retry-interval",
                                "250ms",
                                "--retry-max",
                                "2m",
                                "--stuck-after",
                                "4",
                                "--branch-timeout",
                                "5s",
                                "--tcc-timeout",
                                "1m",
                                "--workers",
                                "8",
                                "--http-threads",
                                "16",
                                "--log-level",
                                "debug",
                                "--shutdown-grace",
                                "3s"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.host == "0.0.0.0");
  CHECK(cl.config.port == 0);
  CHECK(cl.config.db_path == "/tmp/x.db");
  CHECK(cl.config.coordinator.retry_interval == std::chrono::milliseconds(250));
  CHECK(cl.config.retry.max_interval == std::chrono::minutes(2));
  CHECK(cl.config.retry.stuck_after == 4);
  CHECK(cl.config.coordinator.request_timeout == std::chrono::seconds(5));
  CHECK(cl.config.coordinator.tcc_timeout_to_fail == std::chrono::minutes(1));
  CHECK(cl.config.workers == 8);
  CHECK(cl.config.api.threads == 16);
  CHECK(cl.config.log_level == "debug");
  CHECK(cl.config.shutdown_grace == std::chrono::seconds(3));
}

TEST_CASE("--help explains every option and exits 0", "[cli]") {
  const CommandLine cl = Parse({"--help"});
  CHECK(cl.exit_now);
  CHECK(cl.exit_code == 0);
  for (const char* option : {"--host", "--port", "--db", "--retry-interval", "--retry-max",
                             "--stuck-after", "--branch-timeout", "--tcc-timeout", "--log-level"}) {
    CHECK_THAT(cl.output, Catch::Contains(option));
  }
}

TEST_CASE("bad arguments are refused with a message and exit code 2", "[cli]") {
  for (auto args : std::vector<std::vector<const char*>>{{"--port", "70000"},
                                                         {"--retry-interval", "soon"},
                                                         {"--retry-interval", "0s"},
                                                         {"--log-level", "loud"},
                                                         {"--stuck-after", "0"},
                                                         {"--bogus"}}) {
    const CommandLine cl = Parse(args);
    INFO(args[0]);
    CHECK(cl.exit_now);
    CHECK(cl.exit_code != 0);
    CHECK_FALSE(cl.output.empty());
  }
}

}  // namespace
}  // namespace settle::coordinator
