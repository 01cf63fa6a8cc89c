#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace settle::bench {

// What /proc says of a process (pid 0: this one): its CPU time (user + system, from
// /proc/PID/stat, in clock ticks of 10 ms), its thread count (the Threads: line of
// /proc/PID/status) and its threads' names (/proc/PID/task/*/comm). nullopt (empty) once the
// process is gone.
std::optional<double> CpuSeconds(int pid);
std::optional<int> ThreadCount(int pid);
std::map<std::string, int> ThreadNames(int pid);  // name -> how many threads bear it
// CPU seconds of the threads alive now, summed by name (/proc/PID/task/*/stat).
std::map<std::string, double> CpuSecondsByThreadName(int pid);

// "settled-io x2, settle-writer, ..." in name order.
std::string DescribeThreadNames(const std::map<std::string, int>& names);

// The most threads a process had, sampled every 100 ms on a thread of its own from
// construction to Stop (or destruction).
class ThreadCountSampler {
 public:
  explicit ThreadCountSampler(int pid);
  ~ThreadCountSampler();  // Stop()
  ThreadCountSampler(const ThreadCountSampler&) = delete;
  ThreadCountSampler& operator=(const ThreadCountSampler&) = delete;

  // Stops sampling (idempotent) and returns the most seen.
  int Stop();

 private:
  void Sample();

  const int pid_;
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::atomic<int> most_{0};
  std::thread thread_;
};

}  // namespace settle::bench
