#pragma once

#include <cstddef>
#include <string>

namespace settle::testing {

// The value of the sample written exactly as `series` (name and labels, as in
// `settle_circuit_state{host="http://127.0.0.1:9"}`) in Prometheus text from /api/metrics, or
// -1 when there is no such series.
inline double SampleValue(const std::string& metrics, const std::string& series) {
  const std::size_t at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + series.size() + 2));
}

}  // namespace settle::testing
