#include "settle/drive/gid_generator.h"

#include <algorithm>

namespace settle::drive {
namespace {

constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

}  // namespace

GidGenerator::GidGenerator(const Clock& clock) : clock_(clock), rng_(std::random_device{}()) {}

std::string GidGenerator::Next() {
  std::string time_part;
  for (auto ms = static_cast<std::uint64_t>(ToUnixMillis(clock_.Now())); ms > 0; ms /= 36) {
    time_part += kDigits[ms % 36];
  }
  std::reverse(time_part.begin(), time_part.end());
  std::string gid = time_part;
  std::lock_guard lock(mu_);
  for (int i = 0; i < 12; ++i) gid += kDigits[rng_() % 62];
  return gid;
}

}  // namespace settle::drive
