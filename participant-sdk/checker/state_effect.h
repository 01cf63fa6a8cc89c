#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace settle::checker {

// How a JSON state changed between two readings, in the terms that count requests: each number
// by its difference, each array that grew or shrank by its change in length; everything else
// must be the same in both. So {"orders":3} -> {"orders":4} is {"orders":1}, and a list of
// orders that gained one element is {"length":1}. Two effects are equal when a request was
// applied as often in both (for a state that counts or sums what requests do).
class StateEffect {
 public:
  // The effect from `before` to `after`, or nullopt with `why` set when it cannot be put in
  // those terms: a body that is not JSON, a string or a structure that changed.
  static std::optional<StateEffect> Between(const std::string& before, const std::string& after,
                                            std::string& why);

  // Whether nothing changed: every difference is zero.
  bool none() const;
  // Equal effects; numbers that are not integers are compared with a relative tolerance of
  // 1e-9.
  bool operator==(const StateEffect& other) const;
  // Compact JSON: {"orders":1}.
  std::string ToString() const { return delta_.dump(); }

 private:
  explicit StateEffect(nlohmann::json delta) : delta_(std::move(delta)) {}
  nlohmann::json delta_;
};

}  // namespace settle::checker
