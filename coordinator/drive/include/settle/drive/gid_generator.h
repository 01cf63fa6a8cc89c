#pragma once

#include <mutex>
#include <random>
#include <string>

#include "settle/core/clock.h"

namespace settle::drive {

// Makes gids for /newGid: the creation time in milliseconds (base 36, so ids sort roughly by
// age) followed by 12 random base-62 characters (71 bits), unique across restarts without
// touching storage. The clock must outlive it. Thread-safe.
class GidGenerator {
 public:
  explicit GidGenerator(const Clock& clock);
  std::string Next();

 private:
  const Clock& clock_;
  std::mutex mu_;
  std::mt19937_64 rng_;
};

}  // namespace settle::drive
