#pragma once

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "settle/async/asio.h"

namespace settle::async {

// An io_context and the threads that run it: where a process's sockets, timers and coroutines
// live. Nothing in it blocks; work that must block (a database read on PostgreSQL, a
// participant's handler) goes to a BlockingPool and comes back.
//
// Thread-safety: context() from any thread; Start and Stop from one thread, never from one of
// its own threads.
class IoThreads {
 public:
  // `threads` 0: one per core.
  explicit IoThreads(std::size_t threads = 0, std::string name = "settle-io");
  ~IoThreads();  // Stop()
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  asio::io_context& context() { return context_; }
  asio::any_io_executor executor() { return context_.get_executor(); }
  std::size_t size() const { return count_; }

  void Start();
  // Stops the context at once and joins the threads: what is still pending is dropped, so
  // stop servers and clients first. Idempotent.
  void Stop();

 private:
  const std::size_t count_;
  const std::string name_;
  asio::io_context context_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

}  // namespace settle::async
