// The real bank-participant binary: its start line, a read, and a clean stop on SIGTERM.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <regex>

#include "child_process.h"
#include "json_client.h"
#include "temp_dir.h"

namespace settle::bank {
namespace {

using settle::testing::ChildProcess;

// Starts the binary and returns the port from its one line (0 if there was none).
int StartedPort(ChildProcess& bank) {
  const std::string line =
      bank.WaitForLine("bank-participant listening on", std::chrono::seconds(20));
  std::smatch match;
  static const std::regex kLine(R"(bank-participant listening on http://127\.0\.0\.1:(\d+))");
  if (!std::regex_match(line, match, kLine)) return 0;
  return std::stoi(match[1]);
}

TEST_CASE("bank-participant prints its port, serves, and exits 0 on SIGTERM", "[bank][process]") {
  settle::testing::TempDir dir;
  for (int stop_signal : {SIGTERM, SIGINT}) {
    ChildProcess bank({BANK_BINARY, "--port", "0", "--db", dir.File("bank.db"), "--accounts", "4",
                       "--initial-balance", "250"},
                      dir.File("bank.log"));
    const int port = StartedPort(bank);
    REQUIRE(port > 0);
    {
      settle::testing::JsonClient client(port);
      const auto r = client.Get("/api/accounts");
      REQUIRE(r.status == 200);
      CHECK(r.json["accounts"].size() == 4);
      CHECK(r.json["total"] == 1000);
    }
    bank.Signal(stop_signal);
    const int status = bank.Wait(std::chrono::seconds(30));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("bank-participant refuses bad flags", "[bank][process]") {
  settle::testing::TempDir dir;
  ChildProcess bank({BANK_BINARY, "--port", "0", "--db", dir.File("bank.db"), "--accounts", "0"},
                    dir.File("bank.log"));
  const int status = bank.Wait(std::chrono::seconds(30));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
}

}  // namespace
}  // namespace settle::bank
