// The deterministic simulation (README.md): a bounded run of seeds, and a seed replays exactly.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "simulator.h"
#include "temp_dir.h"

namespace settle::simulation {
namespace {

// SETTLE_SIM_SEED (one seed) or SETTLE_SIM_FIRST_SEED and SETTLE_SIM_SEEDS (a range, default
// 1 and 200), SETTLE_SIM_QUEUED_COMMITS=1 for queued commits: scripts/simulate sets them.
std::uint64_t EnvNumber(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

TEST_CASE("every seed of a bounded run keeps the invariants", "[simulation]") {
  testing::TempDir dir;
  std::uint64_t first = EnvNumber("SETTLE_SIM_FIRST_SEED", 1);
  std::uint64_t count = EnvNumber("SETTLE_SIM_SEEDS", 200);
  const bool one = std::getenv("SETTLE_SIM_SEED") != nullptr;
  if (one) {
    first = EnvNumber("SETTLE_SIM_SEED", 1);
    count = 1;
  }
  SimulationSettings settings;
  settings.queued_commits = EnvNumber("SETTLE_SIM_QUEUED_COMMITS", 0) != 0;
  const auto start = std::chrono::steady_clock::now();
  int crashes = 0;
  long steps = 0;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    const SimulationResult result = RunSimulation(seed, dir.path().string(), settings);
    crashes += result.crashes;
    steps += static_cast<long>(result.history.size());
    if (one && result.ok()) std::cout << result.Report();
    if (!result.ok()) {
      FAIL(result.Report() << "failed at seed " << seed << " after "
                           << (seed - first + 1) << " seeds");
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "simulation: seeds " << first << ".." << (first + count - 1) << " passed ("
            << steps << " history lines, " << crashes << " crashes) in " << seconds << " s\n";
}

TEST_CASE("a seed replays exactly", "[simulation]") {
  testing::TempDir dir;
  for (std::uint64_t seed : {7u, 42u}) {
    const SimulationResult a = RunSimulation(seed, dir.path().string());
    const SimulationResult b = RunSimulation(seed, dir.path().string());
    REQUIRE(a.history.size() > 100);
    CHECK(a.history == b.history);
    CHECK(a.failure == b.failure);
  }
}

}  // namespace
}  // namespace settle::simulation
