#include "load_runner.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace settle::bench {

LoadResult RunLoad(const std::string& label, const LoadPlan& plan,
                   const std::function<Status(int, std::uint64_t)>& operation) {
  LatencyRecorder recorder;
  const double seconds = RunLoadInto(label, plan, operation, recorder);
  return {recorder.Summarize(), seconds};
}

double RunLoadInto(const std::string& label, const LoadPlan& plan,
                   const std::function<Status(int, std::uint64_t)>& operation,
                   LatencyRecorder& recorder) {
  using Clock = std::chrono::steady_clock;
  const std::uint64_t errors_before = recorder.errors();
  std::atomic<std::uint64_t> started{0};
  std::atomic<bool> stop{false};
  const Clock::time_point begin = Clock::now();
  const Clock::time_point deadline = begin + plan.duration;
  std::vector<std::thread> clients;
  for (int c = 0; c < plan.clients; ++c) {
    clients.emplace_back([&, c] {
      // With a rate, client c starts its k-th operation at begin + (k * clients + c) / rate.
      const auto interval = plan.rate > 0 ? std::chrono::duration<double>(plan.clients / plan.rate)
                                          : std::chrono::duration<double>(0);
      Clock::time_point due = begin + std::chrono::duration_cast<Clock::duration>(
                                          interval * (static_cast<double>(c) / plan.clients));
      while (!stop) {
        const std::uint64_t n = started++;
        if (plan.count > 0 && n >= plan.count) break;
        if (plan.count == 0 && Clock::now() >= deadline) break;
        Clock::time_point t0 = Clock::now();
        if (plan.rate > 0) {
          if (due > t0) std::this_thread::sleep_until(due);
          t0 = due;
          due += std::chrono::duration_cast<Clock::duration>(interval);
        }
        const Status s = operation(c, n);
        if (s.ok()) {
          recorder.Record(Clock::now() - t0);
        } else {
          recorder.RecordError();
          if (recorder.errors() - errors_before <= 3)
            std::fprintf(stderr, "%s: %s\n", label.c_str(), s.ToString().c_str());
        }
      }
    });
  }
  // Progress: one line per second until every client is done.
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  std::thread reporter([&] {
    std::unique_lock lock(mu);
    std::uint64_t last = recorder.count();
    for (int second = 1; !done_cv.wait_for(lock, std::chrono::seconds(1), [&] { return done; });
         ++second) {
      const std::uint64_t now = recorder.count();
      if (plan.progress) {
        std::fprintf(stderr, "  [%s] %2ds: %6llu tx/s, %llu done, %llu errors\n", label.c_str(),
                     second, static_cast<unsigned long long>(now - last),
                     static_cast<unsigned long long>(now),
                     static_cast<unsigned long long>(recorder.errors()));
      }
      last = now;
    }
  });
  for (auto& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  {
    std::lock_guard lock(mu);
    done = true;
  }
  done_cv.notify_all();
  reporter.join();
  stop = true;
  return seconds;
}

std::string Describe(const std::string& label, const LoadResult& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%-26s %8.1f tx/s  (%llu in %.1f s)  latency p50 %.2f ms  p90 %.2f ms  "
                "p99 %.2f ms  max %.2f ms  errors %llu",
                label.c_str(), r.throughput(), static_cast<unsigned long long>(r.summary.count),
                r.seconds, r.summary.p50_ms, r.summary.p90_ms, r.summary.p99_ms, r.summary.max_ms,
                static_cast<unsigned long long>(r.summary.errors));
  return line;
}

}  // namespace settle::bench
