#include "settle/metrics/prometheus_text.h"

#include <charconv>
#include <cmath>

namespace settle::metrics {
namespace {

void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

std::string FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  // The shortest text that reads back as the same double, without an exponent for the
  // magnitudes durations and counts have.
  const double magnitude = std::fabs(value);
  const auto format = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e15)
                          ? std::chars_format::fixed
                          : std::chars_format::general;
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, format).ptr;
  return std::string(buffer, end);
}

}  // namespace

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  for (char c : help) {
    if (c == '\\') {
      text_ += "\\\\";
    } else if (c == '\n') {
      text_ += "\\n";
    } else {
      text_ += c;
    }
  }
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void PrometheusText::Labels(const MetricLabels& labels, std::string_view le) {
  if (labels.empty() && le.empty()) return;
  text_ += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) text_ += ',';
    first = false;
    text_ += name;
    text_ += "=\"";
    AppendEscaped(text_, value);
    text_ += '"';
  }
  if (!le.empty()) {
    if (!first) text_ += ',';
    text_ += "le=\"";
    text_ += le;
    text_ += '"';
  }
  text_ += '}';
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels, double value) {
  text_ += name;
  Labels(labels);
  text_ += ' ';
  text_ += FormatDouble(value);
  text_ += '\n';
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels,
                            std::uint64_t value) {
  text_ += name;
  Labels(labels);
  text_ += ' ';
  text_ += std::to_string(value);
  text_ += '\n';
}

void PrometheusText::Histogram(std::string_view name, const MetricLabels& labels,
                               const Histogram::Snapshot& snapshot, double unit) {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < snapshot.counts.size(); ++i) {
    cumulative += snapshot.counts[i];
    const std::string le = i < snapshot.bounds.size()
                               ? FormatDouble(static_cast<double>(snapshot.bounds[i]) / unit)
                               : "+Inf";
    text_ += bucket;
    Labels(labels, le);
    text_ += ' ';
    text_ += std::to_string(cumulative);
    text_ += '\n';
  }
  Sample(std::string(name) + "_sum", labels, static_cast<double>(snapshot.sum) / unit);
  Sample(std::string(name) + "_count", labels, snapshot.count);
}

}  // namespace settle::metrics
