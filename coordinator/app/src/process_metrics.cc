#include "settle/app/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace settle::app {
namespace {

std::optional<std::uint64_t> Number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::uint64_t BootTimeSeconds() {
  std::istringstream stat(ReadAll("/proc/stat"));
  std::string key;
  std::uint64_t value = 0;
  while (stat >> key) {
    if (key == "btime" && stat >> value) return value;
    stat.ignore(1 << 20, '\n');
  }
  return 0;
}

std::uint64_t OpenDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  std::uint64_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count > 0 ? count - 1 : 0;  // less the one reading the directory
}

}  // namespace

std::optional<ProcessStats> ParseProcStat(std::string_view text, long ticks_per_second,
                                          long page_size, std::uint64_t boot_time_seconds) {
  // "<pid> (<comm>) <state> <ppid> ...": fields are counted after the comm's last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state)
  std::string_view rest = text.substr(close + 1);
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  }
  const auto field = [&fields](std::size_t number) -> std::optional<std::uint64_t> {
    return number - 3 < fields.size() ? Number(fields[number - 3]) : std::nullopt;
  };
  const auto utime = field(14), stime = field(15), threads = field(20), start = field(22),
             vsize = field(23), rss = field(24);
  if (!utime || !stime || !threads || !start || !vsize || !rss) return std::nullopt;
  ProcessStats stats;
  const double ticks = static_cast<double>(ticks_per_second);
  stats.cpu_seconds = static_cast<double>(*utime + *stime) / ticks;
  stats.threads = *threads;
  stats.start_time_seconds =
      static_cast<double>(boot_time_seconds) + static_cast<double>(*start) / ticks;
  stats.virtual_bytes = *vsize;
  stats.resident_bytes = *rss * static_cast<std::uint64_t>(page_size);
  return stats;
}

std::optional<ProcessStats> ReadProcessStats() {
  std::optional<ProcessStats> stats = ParseProcStat(
      ReadAll("/proc/self/stat"), sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), BootTimeSeconds());
  if (!stats) return std::nullopt;
  stats->open_fds = OpenDescriptors();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) stats->max_fds = limit.rlim_cur;
  return stats;
}

void WriteProcessMetrics(metrics::PrometheusText& out, const ProcessStats& stats) {
  out.Family("process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.");
  out.Sample("process_cpu_seconds_total", {}, stats.cpu_seconds);
  out.Family("process_resident_memory_bytes", "gauge", "Resident memory size, in bytes.");
  out.Sample("process_resident_memory_bytes", {}, stats.resident_bytes);
  out.Family("process_virtual_memory_bytes", "gauge", "Virtual memory size, in bytes.");
  out.Sample("process_virtual_memory_bytes", {}, stats.virtual_bytes);
  out.Family("process_open_fds", "gauge", "Open file descriptors.");
  out.Sample("process_open_fds", {}, stats.open_fds);
  out.Family("process_max_fds", "gauge", "The most file descriptors the process may open.");
  out.Sample("process_max_fds", {}, stats.max_fds);
  out.Family("process_start_time_seconds", "gauge",
             "When the process started, in seconds since the Unix epoch.");
  out.Sample("process_start_time_seconds", {}, stats.start_time_seconds);
  out.Family("process_threads", "gauge", "Threads of the process.");
  out.Sample("process_threads", {}, stats.threads);
}

}  // namespace settle::app
