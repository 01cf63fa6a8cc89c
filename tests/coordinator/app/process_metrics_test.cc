// settled's process_* metrics, named and computed as Prometheus's client libraries do.
#include "settle/app/process_metrics.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::app {
namespace {

TEST_CASE("a process's CPU, memory, threads and start come from its /proc stat line", "[metrics]") {
  // A command name with blanks and parentheses: fields are counted after its last ')'.
  const std::string stat =
      "4242 (settled (x) y) S 1 4242 4242 0 -1 4194560 5000 0 0 0 250 50 0 0 20 0 17 0 "
      "123400 1048576000 25600 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
  const auto stats = ParseProcStat(stat, 100, 4096, 1'700'000'000);
  REQUIRE(stats);
  CHECK(stats->cpu_seconds == Approx(3.0));  // (250 + 50) ticks at 100 a second
  CHECK(stats->threads == 17);
  CHECK(stats->start_time_seconds == Approx(1'700'001'234.0));
  CHECK(stats->virtual_bytes == 1'048'576'000);
  CHECK(stats->resident_bytes == 25'600ull * 4096);
  CHECK_FALSE(ParseProcStat("4242 (settled) S 1 2", 100, 4096, 0));
  CHECK_FALSE(ParseProcStat("no parenthesis", 100, 4096, 0));
}

TEST_CASE("this process's own figures are read and written under Prometheus's names", "[metrics]") {
  const auto stats = ReadProcessStats();
  REQUIRE(stats);
  CHECK(stats->threads >= 1);
  CHECK(stats->resident_bytes > 0);
  CHECK(stats->open_fds >= 3);
  CHECK(stats->max_fds >= stats->open_fds);
  CHECK(stats->start_time_seconds > 1'600'000'000);
  metrics::PrometheusText out;
  WriteProcessMetrics(out, *stats);
  const std::string text = out.Take();
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
                           "process_virtual_memory_bytes ", "process_open_fds ", "process_max_fds ",
                           "process_start_time_seconds ", "process_threads "}) {
    CHECK_THAT(text, Catch::Contains(std::string("\n") + name));
  }
  CHECK_THAT(text, Catch::Contains("# TYPE process_cpu_seconds_total counter"));
}

}  // namespace
}  // namespace settle::app
