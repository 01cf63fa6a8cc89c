#include "process_stats.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace settle::bench {
namespace {

std::string ProcDir(int pid) {
  return pid == 0 ? std::string("/proc/self") : "/proc/" + std::to_string(pid);
}

// utime + stime of a /proc/.../stat file, in seconds.
std::optional<double> StatCpuSeconds(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The name (field 2) is in parentheses and may hold spaces: count fields after its ')'.
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  // Fields 3..13 come first; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 13; ++i) fields >> field;
  if (!(fields >> utime >> stime)) return std::nullopt;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

std::optional<double> CpuSeconds(int pid) { return StatCpuSeconds(ProcDir(pid) + "/stat"); }

std::optional<int> ThreadCount(int pid) {
  std::ifstream in(ProcDir(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return std::nullopt;
}

std::map<std::string, int> ThreadNames(int pid) {
  std::map<std::string, int> names;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(ProcDir(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "comm");
    std::string name;
    if (std::getline(in, name)) ++names[name];
  }
  return names;
}

std::map<std::string, double> CpuSecondsByThreadName(int pid) {
  std::map<std::string, double> cpu;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(ProcDir(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "comm");
    std::string name;
    const std::optional<double> seconds = StatCpuSeconds((task.path() / "stat").string());
    if (std::getline(in, name) && seconds) cpu[name] += *seconds;
  }
  return cpu;
}

std::string DescribeThreadNames(const std::map<std::string, int>& names) {
  std::string text;
  for (const auto& [name, count] : names) {
    if (!text.empty()) text += ", ";
    text += name;
    if (count > 1) text += " x" + std::to_string(count);
  }
  return text;
}

ThreadCountSampler::ThreadCountSampler(int pid) : pid_(pid) {
  thread_ = std::thread([this] { Sample(); });
}

ThreadCountSampler::~ThreadCountSampler() { Stop(); }

int ThreadCountSampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (thread_.joinable()) thread_.join();
  return most_.load();
}

void ThreadCountSampler::Sample() {
  std::unique_lock lock(mu_);
  do {
    if (const std::optional<int> n = ThreadCount(pid_)) most_ = std::max(most_.load(), *n);
  } while (!stop_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; }));
  // One last look, so that a run shorter than the period is seen at its end too.
  if (const std::optional<int> n = ThreadCount(pid_)) most_ = std::max(most_.load(), *n);
}

}  // namespace settle::bench
