#include "settle/metrics/latency_histogram.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

namespace settle {
namespace {

using std::chrono::microseconds;

TEST_CASE("a duration falls in the first bucket whose bound is not below it", "[common]") {
  metrics::LatencyHistogram h;

  h.Record(microseconds(100));        // bucket 0: up to 100 us
  h.Record(microseconds(101));        // bucket 1: up to 250 us
  h.Record(microseconds(7'000));      // bucket 6: up to 10 ms
  h.Record(microseconds(9'000'000));  // above every bound
  h.Record(microseconds(-5));         // a clock step backwards counts as zero

  const metrics::LatencyHistogram::Snapshot s = h.Read();
  CHECK(s.counts[0] == 2);
  CHECK(s.counts[1] == 1);
  CHECK(s.counts[6] == 1);
  CHECK(s.counts[metrics::LatencyHistogram::kBuckets - 1] == 1);
  CHECK(s.count == 5);
  CHECK(s.sum == 100 + 101 + 7'000 + 9'000'000);
  CHECK(s.max == 9'000'000);
}

TEST_CASE("samples above a bound are counted by whole buckets", "[common]") {
  metrics::LatencyHistogram h;
  for (int micros : {50, 900, 4'000, 6'000, 12'000, 2'000'000}) h.Record(microseconds(micros));

  const metrics::LatencyHistogram::Snapshot s = h.Read();

  CHECK(s.CountAbove(5'000) == 3);
  CHECK(s.CountAbove(10'000) == 2);
  CHECK(s.CountAbove(100) == 5);
  CHECK(s.CountAbove(5'000'000) == 0);
}

TEST_CASE("records from many threads are all counted", "[common]") {
  metrics::LatencyHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < 10'000; ++i) h.Record(microseconds(t * 1000 + i % 7));
    });
  }
  for (std::thread& thread : threads) thread.join();

  const metrics::LatencyHistogram::Snapshot s = h.Read();
  CHECK(s.count == 80'000);
  CHECK(s.max == 7'006);
}

}  // namespace
}  // namespace settle
