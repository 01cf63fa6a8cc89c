#include "settle/metrics/latency_histogram.h"

#include <algorithm>

namespace settle::metrics {

void LatencyHistogram::Record(std::chrono::microseconds duration) {
  // A clock step backwards counts as zero.
  histogram_.Record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, duration.count())));
}

}  // namespace settle::metrics
