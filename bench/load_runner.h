#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "latency_recorder.h"
#include "settle/async/asio.h"
#include "settle/core/status.h"

namespace settle::bench {

struct LoadPlan {
  int clients = 16;
  std::chrono::milliseconds duration{10'000};
  std::uint64_t count = 0;  // stop after this many operations (0: run for `duration`)
  bool progress = true;     // a line per second on stderr
  // Operations started per second over all clients (0: each client starts its next one as
  // soon as the last ends). With a rate, an operation's latency runs from the time it was
  // due, not the time a late client got to it, so a stall is not hidden.
  double rate = 0;
};

struct LoadResult {
  LatencyRecorder::Summary summary;
  double seconds = 0;
  double throughput() const {
    return seconds > 0 ? static_cast<double>(summary.count) / seconds : 0;
  }
};

// One operation of client `client` (0..clients-1), the n-th started over all clients: OK, or
// an error that is counted and (the first three) printed. It should not throw; an exception
// counts as an error.
using Operation = std::function<asio::awaitable<Status>(int client, std::uint64_t n)>;

// Runs `plan.clients` clients as coroutines on `executor`, each awaiting `operation` back to
// back or at `plan.rate`, until the duration has passed or `count` operations have started;
// records each one's latency (or its error). Blocks the calling thread until every client has
// finished; the progress line, if any, is printed from a timer on the same executor.
//
// `executor` must belong to an io_context run by exactly one thread (async::IoThreads(1)), other
// than the calling one: the clients share their state without locks. The load generator then
// costs one thread whatever the number of clients.
LoadResult RunLoad(asio::any_io_executor executor, const std::string& label, const LoadPlan& plan,
                   const Operation& operation);

// The same, recording into `recorder`, which may already hold earlier slices of the same
// measurement (interleaved with another one); returns the seconds this slice took.
double RunLoadInto(asio::any_io_executor executor, const std::string& label, const LoadPlan& plan,
                   const Operation& operation, LatencyRecorder& recorder);

// "saga through settled: 3104.2 tx/s, latency p50 4.9 ms, p90 ..., errors 0"
std::string Describe(const std::string& label, const LoadResult& result);

}  // namespace settle::bench
