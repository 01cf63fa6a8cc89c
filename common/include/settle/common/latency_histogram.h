#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace settle {

// Durations counted into fixed buckets, shaped for a Prometheus histogram: Record() is a few
// relaxed atomic adds, so hot paths (every commit, every request) can afford it.
//
// Thread-safety: Record() and Read() from any thread. A Read() racing Record()s may see a
// count without its sum, or the reverse: fine for monitoring, never for accounting.
class LatencyHistogram {
 public:
  // Upper bounds of the buckets, in microseconds; a last bucket counts everything above.
  static constexpr std::array<std::uint64_t, 14> kBoundsMicros = {
      100,   250,    500,    1'000,   2'500,   5'000,     10'000,
      25'000, 50'000, 100'000, 250'000, 500'000, 1'000'000, 5'000'000};
  static constexpr std::size_t kBuckets = kBoundsMicros.size() + 1;

  struct Snapshot {
    std::array<std::uint64_t, kBuckets> counts{};  // per bucket, not cumulative
    std::uint64_t count = 0;
    std::uint64_t sum_micros = 0;
    std::uint64_t max_micros = 0;

    // Samples above `micros`, counted by whole buckets: `micros` should be one of the bounds
    // (the first bucket, which may hold zeros, is never counted).
    std::uint64_t CountAbove(std::uint64_t micros) const;
  };

  void Record(std::chrono::microseconds duration);
  Snapshot Read() const;

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
  std::atomic<std::uint64_t> sum_micros_{0};
  std::atomic<std::uint64_t> max_micros_{0};
};

}  // namespace settle
