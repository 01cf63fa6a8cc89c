#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "settle/common/latency_histogram.h"
#include "settle/common/prometheus_text.h"

namespace settle::coordinator {

// The API's requests of one route: how many got each status code, and how long they took.
// Thread-safety: Count from any thread.
class RouteMetrics {
 public:
  void Count(int status, std::chrono::microseconds elapsed);

  std::map<int, std::uint64_t> ByStatus() const;
  LatencyHistogram::Snapshot Durations() const { return durations_.Read(); }

 private:
  mutable std::mutex mutex_;
  std::map<int, std::uint64_t> by_status_;  // guarded by mutex_
  LatencyHistogram durations_;
};

// settle_http_requests_total{route,code} and settle_http_request_duration_seconds{route}
// for `routes` (route label -> its metrics).
void WriteRouteMetrics(PrometheusText& out, const std::map<std::string, const RouteMetrics*>& routes);

}  // namespace settle::coordinator
