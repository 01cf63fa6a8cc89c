#include "settle/common/latency_histogram.h"

#include <algorithm>

namespace settle {

void LatencyHistogram::Record(std::chrono::microseconds duration) {
  const std::uint64_t micros = static_cast<std::uint64_t>(std::max<std::int64_t>(0, duration.count()));
  const auto bound = std::lower_bound(kBoundsMicros.begin(), kBoundsMicros.end(), micros);
  counts_[static_cast<std::size_t>(bound - kBoundsMicros.begin())].fetch_add(
      1, std::memory_order_relaxed);
  sum_micros_.fetch_add(micros, std::memory_order_relaxed);
  std::uint64_t max = max_micros_.load(std::memory_order_relaxed);
  while (micros > max &&
         !max_micros_.compare_exchange_weak(max, micros, std::memory_order_relaxed)) {
  }
}

LatencyHistogram::Snapshot LatencyHistogram::Read() const {
  Snapshot s;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.count += s.counts[i];
  }
  s.sum_micros = sum_micros_.load(std::memory_order_relaxed);
  s.max_micros = max_micros_.load(std::memory_order_relaxed);
  return s;
}

std::uint64_t LatencyHistogram::Snapshot::CountAbove(std::uint64_t micros) const {
  // Bucket i > 0 holds (bound[i-1], bound[i]]: wholly above `micros` once bound[i-1] >= micros.
  std::uint64_t above = 0;
  for (std::size_t i = 1; i < kBuckets; ++i) {
    if (kBoundsMicros[i - 1] >= micros) above += counts[i];
  }
  return above;
}

}  // namespace settle
