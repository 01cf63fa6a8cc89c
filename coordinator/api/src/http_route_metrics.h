#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "settle/metrics/latency_histogram.h"
#include "settle/metrics/prometheus_text.h"

namespace settle::api {

// The API's requests of one route: how many got each status code, and how long they took.
// Thread-safety: Count from any thread; a few relaxed atomic adds, no lock.
class RouteMetrics {
 public:
  void Count(int status, std::chrono::microseconds elapsed);

  // The status codes counted so far (100..599) with their counts.
  std::map<int, std::uint64_t> ByStatus() const;
  metrics::LatencyHistogram::Snapshot Durations() const { return durations_.Read(); }

 private:
  static constexpr int kFirstStatus = 100;
  static constexpr int kStatuses = 500;  // 100..599
  std::array<std::atomic<std::uint64_t>, kStatuses> by_status_{};
  metrics::LatencyHistogram durations_;
};

// settle_http_requests_total{route,code} and settle_http_request_duration_seconds{route}
// for `routes` (route label -> its metrics).
void WriteRouteMetrics(metrics::PrometheusText& out,
                       const std::map<std::string, const RouteMetrics*>& routes);

}  // namespace settle::api
