#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace settle::metrics {

// Values counted into fixed buckets, shaped for a Prometheus histogram: Record() is a few
// relaxed atomic adds, so hot paths (every commit, every request) can afford it.
//
// Thread-safety: Record() and Read() from any thread. A Read() racing Record()s may see a
// count without its sum, or the reverse: fine for monitoring, never for accounting.
class Histogram {
 public:
  // `bounds`: the buckets' upper bounds, ascending, in static storage; a last bucket counts
  // everything above the last bound.
  explicit Histogram(std::span<const std::uint64_t> bounds);

  struct Snapshot {
    std::span<const std::uint64_t> bounds;
    std::vector<std::uint64_t> counts;  // per bucket (bounds.size() + 1), not cumulative
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    std::uint64_t max = 0;

    // Samples above `value`, counted by whole buckets: `value` should be one of the bounds
    // (the first bucket, which may hold zeros, is never counted).
    std::uint64_t CountAbove(std::uint64_t value) const;
  };

  void Record(std::uint64_t value);
  Snapshot Read() const;

 private:
  std::span<const std::uint64_t> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> max_{0};
};

}  // namespace settle::metrics
