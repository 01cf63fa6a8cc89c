#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace settle::coordinator {

// Runs tasks. The scheduler hands transaction passes to it, and the branch caller uses it to
// run calls in parallel. Tests use InlineExecutor to make everything synchronous.
//
// Thread-safety: Post may be called from any thread, including from inside a task.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual void Post(std::function<void()> task) = 0;
};

// Runs each task on the calling thread, before Post returns.
class InlineExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override { task(); }
};

// A fixed pool of worker threads (Boost.Asio thread_pool). The destructor waits for queued
// and running tasks to finish.
class ThreadPoolExecutor final : public Executor {
 public:
  explicit ThreadPoolExecutor(std::size_t threads);
  ~ThreadPoolExecutor() override;
  void Post(std::function<void()> task) override;

  // Waits for every queued and running task, then stops the threads. Idempotent.
  void Join();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::coordinator
