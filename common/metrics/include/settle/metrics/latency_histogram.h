#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "settle/metrics/histogram.h"

namespace settle::metrics {

// A Histogram of durations, in microseconds, with buckets from 100 us to 5 s.
//
// Thread-safe as Histogram is: Record from any threads at once, Read meanwhile.
class LatencyHistogram {
 public:
  static constexpr std::array<std::uint64_t, 14> kBoundsMicros = {
      100,    250,    500,     1'000,   2'500,   5'000,     10'000,
      25'000, 50'000, 100'000, 250'000, 500'000, 1'000'000, 5'000'000};
  static constexpr std::size_t kBuckets = kBoundsMicros.size() + 1;

  // Its values are microseconds.
  using Snapshot = Histogram::Snapshot;

  void Record(std::chrono::microseconds duration);
  Snapshot Read() const { return histogram_.Read(); }

 private:
  Histogram histogram_{kBoundsMicros};
};

}  // namespace settle::metrics
