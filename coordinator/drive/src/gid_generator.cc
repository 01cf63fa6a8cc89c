#include "settle/drive/gid_generator.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace settle::drive {
namespace {

constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
// A random byte below this maps onto the 62 digits evenly (4 times each); the rest are drawn
// again.
constexpr unsigned kEvenBelow = 62 * 4;

void FillRandom(unsigned char* out, std::size_t size) {
  while (size > 0) {
    const ssize_t got = getrandom(out, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    out += got;
    size -= static_cast<std::size_t>(got);
  }
}

}  // namespace

GidGenerator::GidGenerator(const Clock& clock) : clock_(clock) {}

std::string GidGenerator::Next() {
  std::string gid;
  for (auto ms = static_cast<std::uint64_t>(ToUnixMillis(clock_.Now())); ms > 0; ms /= 36) {
    gid += kDigits[ms % 36];
  }
  std::reverse(gid.begin(), gid.end());
  const std::size_t time_length = gid.size();
  unsigned char random[32];
  while (gid.size() < time_length + kRandomCharacters) {
    FillRandom(random, sizeof random);
    for (unsigned char byte : random) {
      if (byte >= kEvenBelow) continue;
      gid += kDigits[byte % 62];
      if (gid.size() == time_length + kRandomCharacters) break;
    }
  }
  return gid;
}

}  // namespace settle::drive
