#include "fault_proxy_plan.h"

#include <algorithm>
#include <utility>

namespace settle::testing::fault_proxy {
namespace {

// The answer of a random kRespond: no "FAILURE" or "ONGOING" in it, so that the coordinator
// classifies it by its status alone.
constexpr char kRandomRespondBody[] = R"({"error":"injected by the fault proxy"})";

}  // namespace

void FaultPlan::AddRule(FaultRule rule) { rules_.push_back(Rule{std::move(rule)}); }

void FaultPlan::ClearRules() { rules_.clear(); }

void FaultPlan::SetRandomFaults(RandomFaults faults) {
  random_ = std::move(faults);
  rng_.seed(random_.seed);
}

std::optional<Action> FaultPlan::Decide(const std::string& path) {
  for (Rule& entry : rules_) {
    const FaultRule& rule = entry.rule;
    if (rule.path != path) continue;
    std::int64_t index = entry.tried++ - std::max(rule.skip, 0);
    if (index < 0 || (rule.times >= 0 && index >= rule.times)) continue;
    return Action{rule.fault, rule.delay, rule.status, rule.body};
  }
  return DrawRandom();
}

std::optional<Action> FaultPlan::DrawRandom() {
  if (random_.probability <= 0.0 || random_.faults.empty()) return std::nullopt;
  // The top 53 bits make a double in [0, 1) exactly; std::uniform_real_distribution would be
  // as good but may differ between standard libraries.
  double draw = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  if (draw >= random_.probability) return std::nullopt;
  Fault fault = random_.faults[rng_() % random_.faults.size()];
  if (fault == Fault::kHold) fault = Fault::kDelay;
  return Action{fault, random_.delay, random_.status, kRandomRespondBody};
}

}  // namespace settle::testing::fault_proxy
