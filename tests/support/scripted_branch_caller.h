#pragma once

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "settle/calls/branch_caller.h"

namespace settle::testing {

// A BranchCaller whose participants answer as the test scripts: per (branch_id, op), a queue
// of outcomes, then SUCCESS. Records every call. Answers at once (the coroutine never
// suspends). Thread-safe.
class ScriptedBranchCaller final : public calls::BranchCaller {
 public:
  using Key = std::pair<std::string, BranchOp>;

  void Script(const std::string& branch_id, BranchOp op,
              std::vector<engine::BranchOutcome> outcomes) {
    std::lock_guard lock(mu_);
    auto& queue = scripts_[{branch_id, op}];
    for (auto& o : outcomes) queue.push_back(std::move(o));
  }

  // Runs before each call is answered, outside the caller's lock: lets a test act while a
  // pass is in the middle of its calls.
  std::function<void(const engine::BranchCall&)> on_call;

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override {
    co_return Answer(calls);
  }

  std::vector<engine::BranchOutcome> Answer(const std::vector<engine::BranchCall>& calls) {
    if (on_call) {
      for (const auto& call : calls) on_call(call);
    }
    std::vector<engine::BranchOutcome> outcomes;
    std::lock_guard lock(mu_);
    for (const auto& call : calls) {
      calls_.push_back(call);
      auto& queue = scripts_[{call.branch_id, call.op}];
      if (queue.empty()) {
        outcomes.push_back({BranchResult::kSuccess, 200, ""});
      } else {
        outcomes.push_back(queue.front());
        queue.pop_front();
      }
    }
    return outcomes;
  }

  std::vector<engine::BranchCall> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  // "01:action" for each call, in order.
  std::vector<std::string> CallNames() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> names;
    for (const auto& c : calls_) names.push_back(c.branch_id + ":" + std::string(ToString(c.op)));
    return names;
  }
  void ClearCalls() {
    std::lock_guard lock(mu_);
    calls_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::map<Key, std::deque<engine::BranchOutcome>> scripts_;
  std::vector<engine::BranchCall> calls_;
};

inline engine::BranchOutcome Unknown(std::string detail = "HTTP 500: boom") {
  return {BranchResult::kUnknown, 500, std::move(detail)};
}
inline engine::BranchOutcome Failure() { return {BranchResult::kFailure, 409, "HTTP 409"}; }
inline engine::BranchOutcome Ongoing() { return {BranchResult::kOngoing, 425, "HTTP 425"}; }

}  // namespace settle::testing
