#include "state_effect.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace settle::checker {
namespace {

using nlohmann::json;

// The difference of two numbers: exact for integers, a double otherwise.
json Difference(const json& before, const json& after) {
  if (before.is_number_integer() && after.is_number_integer()) {
    // Unsigned values above INT64_MAX wrap, and wrap the same way in both effects compared.
    return static_cast<std::int64_t>(after.get<std::int64_t>() - before.get<std::int64_t>());
  }
  return after.get<double>() - before.get<double>();
}

// The effect of one value, or nullopt with `why`; `path` names the value for `why`.
std::optional<json> Delta(const json& before, const json& after, const std::string& path,
                          std::string& why) {
  if (before.is_number() && after.is_number()) return Difference(before, after);
  if (before.type() != after.type()) {
    why = path + " changed from " + before.dump() + " to " + after.dump();
    return std::nullopt;
  }
  if (before.is_object()) {
    json delta = json::object();
    for (const auto& [key, value] : before.items()) {
      if (!after.contains(key)) {
        why = path + "." + key + " disappeared";
        return std::nullopt;
      }
      std::optional<json> inner = Delta(value, after.at(key), path + "." + key, why);
      if (!inner) return std::nullopt;
      delta[key] = std::move(*inner);
    }
    for (const auto& [key, value] : after.items()) {
      if (!before.contains(key)) {
        why = path + "." + key + " appeared";
        return std::nullopt;
      }
    }
    return delta;
  }
  if (before.is_array()) {
    if (before.size() != after.size()) {
      return json{{"length", static_cast<std::int64_t>(after.size()) -
                                 static_cast<std::int64_t>(before.size())}};
    }
    json delta = json::array();
    for (std::size_t i = 0; i < before.size(); ++i) {
      std::optional<json> inner =
          Delta(before[i], after[i], path + "[" + std::to_string(i) + "]", why);
      if (!inner) return std::nullopt;
      delta.push_back(std::move(*inner));
    }
    return delta;
  }
  if (before != after) {
    why = path + " changed from " + before.dump() + " to " + after.dump();
    return std::nullopt;
  }
  return json();  // the same string, boolean or null
}

bool NoDelta(const json& delta) {
  if (delta.is_number()) return delta.get<double>() == 0;
  if (delta.is_structured()) return std::all_of(delta.begin(), delta.end(), NoDelta);
  return true;
}

bool SameDelta(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_integer() && b.is_number_integer()) return a == b;
    const double x = a.get<double>();
    const double y = b.get<double>();
    return std::fabs(x - y) <= 1e-9 * std::max({1.0, std::fabs(x), std::fabs(y)});
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key) || !SameDelta(value, b.at(key))) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!SameDelta(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

std::optional<StateEffect> StateEffect::Between(const std::string& before, const std::string& after,
                                                std::string& why) {
  const json old_state = json::parse(before, nullptr, false);
  const json new_state = json::parse(after, nullptr, false);
  if (old_state.is_discarded() || new_state.is_discarded()) {
    why = "the state is not JSON";
    return std::nullopt;
  }
  std::optional<json> delta = Delta(old_state, new_state, "$", why);
  if (!delta) return std::nullopt;
  return StateEffect(std::move(*delta));
}

bool StateEffect::none() const { return NoDelta(delta_); }

bool StateEffect::operator==(const StateEffect& other) const {
  return SameDelta(delta_, other.delta_);
}

}  // namespace settle::checker
