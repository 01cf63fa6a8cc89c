#include "latency_recorder.h"

#include <algorithm>
#include <numeric>

namespace settle::bench {

void LatencyRecorder::Record(std::chrono::nanoseconds latency) {
  std::lock_guard lock(mu_);
  nanos_.push_back(latency.count());
}

void LatencyRecorder::RecordError() {
  std::lock_guard lock(mu_);
  ++errors_;
}

void LatencyRecorder::Add(const LatencyRecorder& other) {
  std::vector<std::int64_t> nanos;
  std::uint64_t errors = 0;
  {
    std::lock_guard lock(other.mu_);
    nanos = other.nanos_;
    errors = other.errors_;
  }
  std::lock_guard lock(mu_);
  nanos_.insert(nanos_.end(), nanos.begin(), nanos.end());
  errors_ += errors;
}

std::uint64_t LatencyRecorder::count() const {
  std::lock_guard lock(mu_);
  return nanos_.size();
}

std::uint64_t LatencyRecorder::errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}

LatencyRecorder::Summary LatencyRecorder::Summarize() const {
  std::vector<std::int64_t> sorted;
  Summary s;
  {
    std::lock_guard lock(mu_);
    sorted = nanos_;
    s.errors = errors_;
  }
  s.count = sorted.size();
  if (sorted.empty()) return s;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) {
    const auto index = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1));
    return static_cast<double>(sorted[index]) / 1e6;
  };
  s.p50_ms = at(0.50);
  s.p90_ms = at(0.90);
  s.p99_ms = at(0.99);
  s.max_ms = static_cast<double>(sorted.back()) / 1e6;
  s.mean_ms =
      std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size()) / 1e6;
  return s;
}

}  // namespace settle::bench
