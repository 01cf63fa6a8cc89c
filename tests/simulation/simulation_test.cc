// The deterministic simulation (README.md): a bounded run of seeds, and a seed replays exactly.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <utility>

#include <unistd.h>
#include <filesystem>
#include <system_error>

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

// Where the runs' database files go: in memory (/dev/shm) when there is one, since a run
// commits (and fsyncs) some hundred times and its file is thrown away; else a temp dir.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code error;
    const std::filesystem::path shm = "/dev/shm";
    if (std::filesystem::is_directory(shm, error)) {
      path_ = shm / ("settle-simulation-" + std::to_string(::getpid()));
      if (std::filesystem::create_directories(path_, error) || !error) return;
    }
    path_ = fallback_.path();
  }
  ~ScratchDir() {
    std::error_code error;
    if (path_ != fallback_.path()) std::filesystem::remove_all(path_, error);
  }
  std::string path() const { return path_.string(); }

 private:
  testing::TempDir fallback_;
  std::filesystem::path path_;
};

TEST_CASE("every seed of a bounded run keeps the invariants", "[simulation]") {
  ScratchDir dir;
  std::uint64_t first = EnvNumber("SETTLE_SIM_FIRST_SEED", 1);
  std::uint64_t count = EnvNumber("SETTLE_SIM_SEEDS", 200);
  const bool one = std::getenv("SETTLE_SIM_SEED") != nullptr;
  if (one) {
    first = EnvNumber("SETTLE_SIM_SEED", 1);
    count = 1;
  }
  SimulationSettings settings;
  settings.queued_commits = EnvNumber("SETTLE_SIM_QUEUED_COMMITS", 0) != 0;
  settings.instances = static_cast<int>(EnvNumber("SETTLE_SIM_INSTANCES", 1));
  const auto start = std::chrono::steady_clock::now();
  int crashes = 0;
  long steps = 0;
  std::map<std::string, int> endings;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    const SimulationResult result = RunSimulation(seed, dir.path(), settings);
    crashes += result.crashes;
    steps += static_cast<long>(result.history.size());
    for (const auto& [ending, n] : result.endings) endings[ending] += n;
    if (one && result.ok()) std::cout << result.Report();
    if (!result.ok()) {
      FAIL(result.Report() << "failed at seed " << seed << " after " << (seed - first + 1)
                           << " seeds");
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "simulation: seeds " << first << ".." << (first + count - 1) << " passed (" << steps
            << " history lines, " << crashes << " crashes) in " << seconds << " s\n";
  std::cout << "transactions ended:";
  for (const auto& [ending, n] : endings) std::cout << " " << ending << " " << n << ",";
  std::cout << "\n";
  // A long enough run reaches every ending of every type, or the simulation lost its reach.
  if (count >= 100) {
    for (const char* type : {"tcc", "saga", "msg", "workflow"}) {
      for (const char* status : {"succeed", "failed"}) {
        INFO(type << " " << status);
        CHECK(endings[std::string(type) + " " + status] > 0);
      }
    }
  }
}

TEST_CASE("every seed of a bounded run with queued commits keeps the invariants", "[simulation]") {
  ScratchDir dir;
  SimulationSettings settings;
  settings.queued_commits = true;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const SimulationResult result = RunSimulation(seed, dir.path(), settings);
    if (!result.ok())
      FAIL(result.Report() << "failed at seed " << seed << " after " << seed << " seeds");
  }
}

TEST_CASE("every seed of a bounded run with three instances on leases keeps the invariants",
          "[simulation]") {
  ScratchDir dir;
  SimulationSettings settings;
  settings.instances = 3;
  settings.queued_commits = true;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const SimulationResult result = RunSimulation(seed, dir.path(), settings);
    if (!result.ok())
      FAIL(result.Report() << "failed at seed " << seed << " after " << seed << " seeds");
  }
}

TEST_CASE("a seed replays exactly", "[simulation]") {
  ScratchDir dir;
  SimulationSettings queued;
  queued.queued_commits = true;
  SimulationSettings instances = queued;
  instances.instances = 3;
  for (const auto& [seed, settings] :
       {std::pair{7u, SimulationSettings{}}, std::pair{42u, queued}, std::pair{3u, instances}}) {
    const SimulationResult a = RunSimulation(seed, dir.path(), settings);
    const SimulationResult b = RunSimulation(seed, dir.path(), settings);
    REQUIRE(a.history.size() > 100);
    CHECK(a.history == b.history);
    CHECK(a.failure == b.failure);
  }
}

}  // namespace
}  // namespace settle::simulation
