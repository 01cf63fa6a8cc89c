#include "settle/metrics/prometheus_text.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>

namespace settle {
namespace {

TEST_CASE("a family starts with its HELP and TYPE lines, then its samples", "[common]") {
  metrics::PrometheusText out;
  out.Family("jobs_total", "counter", "Jobs done.");
  out.Sample("jobs_total", {{"kind", "a"}, {"result", "ok"}}, std::uint64_t{3});
  out.Sample("jobs_total", {}, 1.5);

  CHECK(out.text() ==
        "# HELP jobs_total Jobs done.\n"
        "# TYPE jobs_total counter\n"
        "jobs_total{kind=\"a\",result=\"ok\"} 3\n"
        "jobs_total 1.5\n");
}

TEST_CASE("label values are escaped: backslash, double quote and newline", "[common]") {
  metrics::PrometheusText out;
  out.Sample("m", {{"route", "a\\b\"c\nd"}}, std::uint64_t{1});

  CHECK(out.text() == "m{route=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST_CASE(
    "a histogram has cumulative buckets ending at +Inf, a sum and a count, in the unit "
    "given",
    "[common]") {
  static constexpr std::array<std::uint64_t, 2> kBounds = {1'000, 250'000};
  metrics::Histogram h(kBounds);
  h.Record(500);      // <= 1 ms
  h.Record(1'000);    // <= 1 ms: bounds are inclusive
  h.Record(200'000);  // <= 250 ms
  h.Record(900'000);  // above every bound

  metrics::PrometheusText out;
  out.Histogram("d_seconds", {{"op", "x"}}, h.Read(), 1e6);

  CHECK(out.text() ==
        "d_seconds_bucket{op=\"x\",le=\"0.001\"} 2\n"
        "d_seconds_bucket{op=\"x\",le=\"0.25\"} 3\n"
        "d_seconds_bucket{op=\"x\",le=\"+Inf\"} 4\n"
        "d_seconds_sum{op=\"x\"} 1.1015\n"
        "d_seconds_count{op=\"x\"} 4\n");
}

TEST_CASE("a histogram without labels has only le on its buckets", "[common]") {
  static constexpr std::array<std::uint64_t, 1> kBounds = {4};
  metrics::Histogram h(kBounds);
  h.Record(9);

  metrics::PrometheusText out;
  out.Histogram("batch", {}, h.Read());

  CHECK(out.text() ==
        "batch_bucket{le=\"4\"} 0\n"
        "batch_bucket{le=\"+Inf\"} 1\n"
        "batch_sum 9\n"
        "batch_count 1\n");
}

}  // namespace
}  // namespace settle
