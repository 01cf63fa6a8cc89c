#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fault_proxy.h"

namespace settle::testing::fault_proxy {

// The fault chosen for one request, with what it needs.
struct Action {
  Fault fault = Fault::kDropRequest;
  std::chrono::milliseconds delay{0};  // kDelay
  int status = 503;                    // kRespond
  std::string body;                    // kRespond
};

// Decides, request by request, which fault the proxy applies. Each request is tried against
// the rules in the order they were added; every rule it is tried against counts it (so a rule
// counts the requests for its path that no earlier rule took, from when it was added), and
// the first rule whose window [skip, skip + times) holds that count wins, ending the search.
// A request no rule takes gets the random faults; there kHold is not allowed, and becomes
// kDelay for RandomFaults::delay, so that a soak test never waits for a Release nobody calls.
// The random draws come from std::mt19937_64 with arithmetic that does not depend on the
// standard library, so a seed and an order of requests give the same faults everywhere.
// Not thread-safe: the proxy calls it under its lock, in the order it reads requests.
class FaultPlan {
 public:
  void AddRule(FaultRule rule);
  void ClearRules();
  // Restarts the random sequence from `faults.seed`.
  void SetRandomFaults(RandomFaults faults);

  std::optional<Action> Decide(const std::string& path);

 private:
  struct Rule {
    FaultRule rule;
    std::int64_t tried = 0;
  };

  std::optional<Action> DrawRandom();

  std::vector<Rule> rules_;
  RandomFaults random_;
  std::mt19937_64 rng_;
};

}  // namespace settle::testing::fault_proxy
