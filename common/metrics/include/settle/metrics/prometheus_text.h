#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/metrics/histogram.h"

namespace settle::metrics {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Writes metrics in Prometheus's text exposition format (version 0.0.4): a family's HELP and
// TYPE lines, then its samples. Label values are escaped; names are the caller's constants.
//
// A value that holds the text it writes; not thread-safe: one writer builds one page.
class PrometheusText {
 public:
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // Starts a family; `type` is counter, gauge or histogram.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const MetricLabels& labels, double value);
  void Sample(std::string_view name, const MetricLabels& labels, std::uint64_t value);
  // A histogram's cumulative _bucket samples (with le="+Inf"), _sum and _count. Bounds and sum
  // are divided by `unit` (1e6 turns microseconds into the seconds Prometheus expects).
  void Histogram(std::string_view name, const MetricLabels& labels,
                 const Histogram::Snapshot& snapshot, double unit = 1.0);

  const std::string& text() const { return text_; }
  std::string Take() { return std::move(text_); }

 private:
  void Labels(const MetricLabels& labels, std::string_view le = {});

  std::string text_;
};

}  // namespace settle::metrics
