// The randomized soak: concurrent TCC and saga transfers between two banks, random faults on
// every call (client -> bank and settled -> bank), and settled killed and restarted
// periodically, for a bounded time; then every invariant must hold.
//
// CI runs a short version. scripts/soak runs a long one: SETTLE_SOAK_SECONDS (default 40),
// SETTLE_SOAK_CLIENTS (default 4), SETTLE_SOAK_SEED (default: from the clock, printed).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "fault_world.h"

namespace settle::testing {
namespace {

long long EnvOr(const char* name, long long fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoll(value) : fallback;
}

struct Tally {
  std::atomic<long> committed{0};
  std::atomic<long> rolled_back{0};
  std::atomic<long> errors{0};  // the coordinator was down or a call was lost: no outcome
};

TEST_CASE("a randomized soak with faults and coordinator kills keeps every invariant",
          "[fault][soak]") {
  const auto duration = std::chrono::seconds(EnvOr("SETTLE_SOAK_SECONDS", 40));
  const int clients = static_cast<int>(EnvOr("SETTLE_SOAK_CLIENTS", 4));
  const auto seed = static_cast<std::uint64_t>(
      EnvOr("SETTLE_SOAK_SEED", std::chrono::system_clock::now().time_since_epoch().count()));
  const auto kill_every = std::chrono::seconds(8);

  WorldOptions options;
  options.accounts = 10;
  options.settled_args = {"--retry-interval", "100ms", "--retry-max", "1s",
                          "--tcc-timeout",    "5s",    "--log-level", "error"};
  FaultWorld w(options);
  const std::vector<Fault> kinds = {Fault::kDropRequest, Fault::kDropResponse,
                                    Fault::kDuplicate,   Fault::kRespond,
                                    Fault::kDelay,       Fault::kCloseMidBody};
  for (int bank : {0, 1}) {
    w.proxy(bank).SetRandomFaults({.probability = 0.05,
                                   .seed = seed + static_cast<std::uint64_t>(bank),
                                   .faults = kinds,
                                   .delay = std::chrono::milliseconds(30)});
  }

  Tally tally;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937_64 rng(seed * 31 + static_cast<std::uint64_t>(c));
      auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      while (!stop) {
        Transfer t;
        t.tcc = pick(0, 1) == 0;
        t.from_bank = pick(0, 1);
        t.to_bank = 1 - t.from_bank;
        t.from_account = std::to_string(pick(1, options.accounts));
        t.to_account = std::to_string(pick(1, options.accounts));
        t.amount = pick(1, 4000);  // large ones run accounts dry: refusals and rollbacks
        auto outcome = w.Run(t);
        if (!outcome) {
          ++tally.errors;
        } else if (outcome->committed()) {
          ++tally.committed;
        } else {
          ++tally.rolled_back;
        }
      }
    });
  }
  int kills = 0;
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() + kill_every < deadline) {
    std::this_thread::sleep_for(kill_every);
    w.KillSettled();
    ++kills;
    w.RestartSettled();
  }
  std::this_thread::sleep_until(deadline);
  stop = true;
  for (auto& t : threads) t.join();
  for (int bank : {0, 1}) w.proxy(bank).SetRandomFaults({});

  const long faults = static_cast<long>(w.proxy(0).FaultsApplied() + w.proxy(1).FaultsApplied());
  std::printf(
      "soak: %llds, %d clients, seed %llu: %ld transfers (%ld accepted, %ld rolled back, %ld "
      "without an answer), %ld faults injected, %d coordinator kills\n",
      static_cast<long long>(duration.count()), clients, static_cast<unsigned long long>(seed),
      tally.committed + tally.rolled_back + tally.errors, tally.committed.load(),
      tally.rolled_back.load(), tally.errors.load(), faults, kills);
  std::fflush(stdout);
  CHECK(tally.committed > 0);
  CHECK(faults > 0);
  w.CheckInvariants(std::chrono::seconds(120));
}

}  // namespace
}  // namespace settle::testing
