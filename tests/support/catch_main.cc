#define CATCH_CONFIG_RUNNER
#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <cstdlib>

// Settle logs every state change; in tests only errors are shown unless SETTLE_TEST_LOG_LEVEL
// (trace, debug, info, ...) asks for more.
int main(int argc, char* argv[]) {
  const char* level = std::getenv("SETTLE_TEST_LOG_LEVEL");
  spdlog::set_level(spdlog::level::from_str(level != nullptr ? level : "error"));
  return Catch::Session().run(argc, argv);
}
