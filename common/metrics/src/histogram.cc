#include "settle/metrics/histogram.h"

#include <algorithm>

namespace settle::metrics {

Histogram::Histogram(std::span<const std::uint64_t> bounds)
    : bounds_(bounds), counts_(new std::atomic<std::uint64_t>[bounds.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Record(std::uint64_t value) {
  const auto bound = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  counts_[static_cast<std::size_t>(bound - bounds_.begin())].fetch_add(1,
                                                                       std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  std::uint64_t max = max_.load(std::memory_order_relaxed);
  while (value > max && !max_.compare_exchange_weak(max, value, std::memory_order_relaxed)) {
  }
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bounds = bounds_;
  s.counts.resize(bounds_.size() + 1);
  for (std::size_t i = 0; i < s.counts.size(); ++i) {
    s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.count += s.counts[i];
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  s.max = max_.load(std::memory_order_relaxed);
  return s;
}

std::uint64_t Histogram::Snapshot::CountAbove(std::uint64_t value) const {
  // Bucket i > 0 holds (bound[i-1], bound[i]]: wholly above `value` once bound[i-1] >= value.
  std::uint64_t above = 0;
  for (std::size_t i = 1; i < counts.size(); ++i) {
    if (bounds[i - 1] >= value) above += counts[i];
  }
  return above;
}

}  // namespace settle::metrics
