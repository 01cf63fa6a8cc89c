#pragma once

#include <string>

#include "settle/core/clock.h"

namespace settle::drive {

// Makes gids for /newGid: the creation time in milliseconds (base 36, so ids sort roughly by
// age) followed by 22 random base-62 characters (130 bits) from the kernel's cryptographic
// random source (getrandom), unique across restarts and instances without touching storage:
// among a billion gids made in one millisecond, two collide with probability below 2^-70, and
// nobody can predict the next one from those it has seen.
//
// Lifetime: the clock must outlive it. Thread-safety: Next from any thread.
class GidGenerator {
 public:
  static constexpr int kRandomCharacters = 22;

  explicit GidGenerator(const Clock& clock);
  // Throws std::system_error if the kernel's random source fails (it does not, once the
  // system has booted).
  std::string Next();

 private:
  const Clock& clock_;
};

}  // namespace settle::drive
