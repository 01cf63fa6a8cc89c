#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "settle/metrics/prometheus_text.h"

namespace settle::app {

// What the kernel says of this process, as Prometheus's client libraries name it
// (process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds, process_threads), so that
// the dashboards and alerts written for them work on settled too.
struct ProcessStats {
  double cpu_seconds = 0;  // user and system
  std::uint64_t resident_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  std::uint64_t threads = 0;
  double start_time_seconds = 0;  // since the Unix epoch
  std::uint64_t open_fds = 0;
  std::uint64_t max_fds = 0;
};

// The fields of /proc/<pid>/stat's `text` (utime, stime, num_threads, starttime, vsize, rss),
// with the kernel's clock ticks per second, page size and boot time (/proc/stat's btime);
// nullopt for text that does not parse. The command name may hold blanks and parentheses.
std::optional<ProcessStats> ParseProcStat(std::string_view text, long ticks_per_second,
                                          long page_size, std::uint64_t boot_time_seconds);

// This process's, read from /proc/self; nullopt where /proc is not there.
std::optional<ProcessStats> ReadProcessStats();

void WriteProcessMetrics(metrics::PrometheusText& out, const ProcessStats& stats);

}  // namespace settle::app
