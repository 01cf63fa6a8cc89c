#include "settle/core/duration_text.h"

#include <array>
#include <charconv>
#include <utility>

namespace settle {
namespace {

constexpr std::int64_t kMaxMillis = 10LL * 365 * 24 * 3600 * 1000;

// Longest unit first, so that FormatDuration picks the largest exact one.
constexpr std::array<std::pair<std::string_view, std::int64_t>, 5> kUnits{{
    {"d", 24LL * 3600 * 1000},
    {"h", 3600LL * 1000},
    {"m", 60LL * 1000},
    {"s", 1000},
    {"ms", 1},
}};

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  const auto invalid = [&] {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" is not a duration such as 250ms, 3s, 2m, 1h or 7d");
  };
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || value < 0) return invalid();
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t scale = 0;
  if (unit.empty()) scale = 1000;
  for (const auto& [name, millis] : kUnits) {
    if (unit == name) scale = millis;
  }
  if (scale == 0) return invalid();
  if (value > kMaxMillis / scale) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" is longer than ten years");
  }
  return Duration(value * scale);
}

std::string FormatDuration(Duration d) {
  const std::int64_t ms = d.count();
  for (const auto& [name, millis] : kUnits) {
    if (ms != 0 && ms % millis == 0) return std::to_string(ms / millis) + std::string(name);
  }
  return std::to_string(ms) + "ms";
}

}  // namespace settle
