#include "http_route_metrics.h"

namespace settle::api {

void RouteMetrics::Count(int status, std::chrono::microseconds elapsed) {
  // The server only sends codes it knows; anything else would be a bug, counted as 500.
  const int index = (status >= kFirstStatus && status < kFirstStatus + kStatuses)
                        ? status - kFirstStatus
                        : 500 - kFirstStatus;
  by_status_[static_cast<std::size_t>(index)].fetch_add(1, std::memory_order_relaxed);
  durations_.Record(elapsed);
}

std::map<int, std::uint64_t> RouteMetrics::ByStatus() const {
  std::map<int, std::uint64_t> counts;
  for (int i = 0; i < kStatuses; ++i) {
    const std::uint64_t n = by_status_[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
    if (n > 0) counts.emplace(kFirstStatus + i, n);
  }
  return counts;
}

void WriteRouteMetrics(metrics::PrometheusText& out,
                       const std::map<std::string, const RouteMetrics*>& routes) {
  out.Family("settle_http_requests_total", "counter",
             "Requests answered by the API, by route and HTTP status code (route \"unmatched\": "
             "no route; \"refused\": refused before routing, as malformed or oversized).");
  for (const auto& [route, metrics] : routes) {
    for (const auto& [status, count] : metrics->ByStatus()) {
      out.Sample("settle_http_requests_total", {{"route", route}, {"code", std::to_string(status)}},
                 count);
    }
  }
  out.Family("settle_http_request_duration_seconds", "histogram",
             "Time spent handling requests, from routing to the answer, by route.");
  for (const auto& [route, metrics] : routes) {
    const metrics::LatencyHistogram::Snapshot durations = metrics->Durations();
    if (durations.count == 0) continue;
    out.Histogram("settle_http_request_duration_seconds", {{"route", route}}, durations, 1e6);
  }
}

}  // namespace settle::api
