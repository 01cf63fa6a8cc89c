#include "load_runner.h"

#include <cstdio>
#include <exception>
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "settle/async/await.h"

namespace settle::bench {
namespace {

using Steady = std::chrono::steady_clock;

// What the clients of one run share. Every coroutine that touches it runs on the run's one I/O
// thread, so nothing here needs a lock (the recorder has its own, for the reader at the end).
struct Run {
  Run(asio::any_io_executor executor, const std::string& label, const LoadPlan& plan,
      const Operation& operation, LatencyRecorder& recorder)
      : label(label),
        plan(plan),
        operation(operation),
        recorder(recorder),
        errors_before(recorder.errors()),
        progress(std::move(executor)) {}

  const std::string label;
  const LoadPlan plan;
  const Operation& operation;
  LatencyRecorder& recorder;
  const std::uint64_t errors_before;
  Steady::time_point begin;
  Steady::time_point deadline;
  Steady::time_point end;  // when the last client finished
  std::uint64_t started = 0;
  int clients_left = 0;
  bool done = false;
  asio::steady_timer progress;  // the progress line's tick, cancelled by the last client
};

// One client: operations back to back, or each at its due time with a rate.
asio::awaitable<bool> RunClient(std::shared_ptr<Run> run, int client) {
  const LoadPlan& plan = run->plan;
  // With a rate, client c starts its k-th operation at begin + (k * clients + c) / rate.
  const auto interval = plan.rate > 0 ? std::chrono::duration<double>(plan.clients / plan.rate)
                                      : std::chrono::duration<double>(0);
  Steady::time_point due =
      run->begin + std::chrono::duration_cast<Steady::duration>(
                       interval * (static_cast<double>(client) / plan.clients));
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  asio::steady_timer pacer(executor);
  for (;;) {
    const std::uint64_t n = run->started++;
    if (plan.count > 0 && n >= plan.count) break;
    if (plan.count == 0 && Steady::now() >= run->deadline) break;
    Steady::time_point t0 = Steady::now();
    if (plan.rate > 0) {
      if (due > t0) {
        boost::system::error_code ignored;
        pacer.expires_at(due);
        co_await pacer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      }
      t0 = due;
      due += std::chrono::duration_cast<Steady::duration>(interval);
    }
    Status s;
    try {
      s = co_await run->operation(client, n);
    } catch (const std::exception& e) {
      // A client that ended here would leave the run short of one client; count it instead.
      s = Status::Internal(std::string("operation threw: ") + e.what());
    }
    if (s.ok()) {
      run->recorder.Record(Steady::now() - t0);
    } else {
      run->recorder.RecordError();
      if (run->recorder.errors() - run->errors_before <= 3) {
        std::fprintf(stderr, "%s: %s\n", run->label.c_str(), s.ToString().c_str());
      }
    }
  }
  if (--run->clients_left == 0) {
    run->end = Steady::now();
    run->done = true;
    run->progress.cancel();
  }
  co_return true;
}

// The progress line, once a second until the last client has finished.
asio::awaitable<bool> Report(std::shared_ptr<Run> run) {
  std::uint64_t last = run->recorder.count();
  for (int second = 1; !run->done; ++second) {
    boost::system::error_code ec;
    run->progress.expires_at(run->begin + std::chrono::seconds(second));
    co_await run->progress.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || run->done) break;
    const std::uint64_t now = run->recorder.count();
    std::fprintf(stderr, "  [%s] %2ds: %6llu tx/s, %llu done, %llu errors\n", run->label.c_str(),
                 second, static_cast<unsigned long long>(now - last),
                 static_cast<unsigned long long>(now),
                 static_cast<unsigned long long>(run->recorder.errors()));
    last = now;
  }
  co_return true;
}

// Every client and the progress line; the seconds from the start to the last client's end.
asio::awaitable<double> RunAll(std::shared_ptr<Run> run) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  run->begin = Steady::now();
  run->deadline = run->begin + run->plan.duration;
  run->clients_left = run->plan.clients;
  std::vector<asio::awaitable<bool>> tasks;
  tasks.reserve(static_cast<std::size_t>(run->plan.clients) + 1);
  for (int c = 0; c < run->plan.clients; ++c) tasks.push_back(RunClient(run, c));
  if (run->plan.progress) tasks.push_back(Report(run));
  asio::awaitable<std::vector<bool>> all = async::AwaitAll(executor, std::move(tasks));
  co_await std::move(all);
  co_return std::chrono::duration<double>(run->end - run->begin).count();
}

}  // namespace

LoadResult RunLoad(asio::any_io_executor executor, const std::string& label, const LoadPlan& plan,
                   const Operation& operation) {
  LatencyRecorder recorder;
  const double seconds = RunLoadInto(std::move(executor), label, plan, operation, recorder);
  return {recorder.Summarize(), seconds};
}

double RunLoadInto(asio::any_io_executor executor, const std::string& label, const LoadPlan& plan,
                   const Operation& operation, LatencyRecorder& recorder) {
  if (plan.clients <= 0) return 0;
  auto run = std::make_shared<Run>(executor, label, plan, operation, recorder);
  std::future<double> seconds = asio::co_spawn(executor, RunAll(run), asio::use_future);
  return seconds.get();
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
