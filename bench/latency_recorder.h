#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace settle::bench {

// Latencies of completed operations, from many threads; percentiles at the end. Keeps every
// sample (a few million at most in a benchmark run), so percentiles are exact.
class LatencyRecorder {
 public:
  void Record(std::chrono::nanoseconds latency);
  void RecordError();
  // Adds every sample and error of `other` (a slice of the same measurement).
  void Add(const LatencyRecorder& other);

  struct Summary {
    std::uint64_t count = 0;
    std::uint64_t errors = 0;
    double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  };
  // Sorts a copy; call at the end or for progress.
  Summary Summarize() const;
  std::uint64_t count() const;
  std::uint64_t errors() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::int64_t> nanos_;
  std::uint64_t errors_ = 0;
};

}  // namespace settle::bench
