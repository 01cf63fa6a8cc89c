#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace settle::simulation {

// What one seeded run found: the history (one line per step) and, if an invariant broke,
// which one (empty: every invariant held).
struct SimulationResult {
  std::uint64_t seed = 0;
  std::vector<std::string> history;
  std::string failure;
  int steps = 0;
  int crashes = 0;
  bool queued_commits = false;  // the mode it ran in, for the replay command
  int instances = 1;
  // How the clients' transactions ended ("saga failed": 1, "msg not stored": 2, ...): what a
  // run of seeds covered.
  std::map<std::string, int> endings;

  bool ok() const { return failure.empty(); }
  // The seed, the failure and every line of the history, for a failing test's message.
  std::string Report() const;
};

struct SimulationSettings {
  int steps = 300;      // steps with faults, before the run settles
  int tcc_clients = 3;  // simulated clients of each type, one gid each
  int saga_clients = 3;
  int msg_clients = 3;
  int workflow_clients = 3;
  int max_branches = 3;     // branches a client may register
  int max_crashes = 2;      // crashes (restarts) per run
  int settle_limit = 3000;  // steps the settling phase may take before it counts as stuck
  // false: a commit completes inside the handler that asks for it (Store's default
  // CommitAsync). true: commits queue and the simulator applies the oldest as a step, as the
  // store's writer thread does (README.md).
  bool queued_commits = false;
  // Coordinator instances on the one database. Several: each holds an instance lease (the
  // database's side simulated as PostgreSQL keeps it), claims a transaction before driving it
  // and fences its calls by the lease, as settled does on PostgreSQL.
  int instances = 1;
};

// Runs the real Coordinator, TransactionDriver and Scheduler over a SQLite file on one thread:
// every choice (which handler runs, which call is answered and how, what a client does, how
// far time moves, when the process crashes) comes from one std::mt19937_64 seeded with
// `seed`, so the same seed gives the same history. The invariants (docs in README.md) are
// checked after every step; the first broken one ends the run. `dir` holds the database file.
SimulationResult RunSimulation(std::uint64_t seed, const std::string& dir,
                               const SimulationSettings& settings = {});

}  // namespace settle::simulation
