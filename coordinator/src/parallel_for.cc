#include "parallel_for.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace settle::coordinator {
namespace {

// Shared by the caller and its helper tasks. Helpers hold it by shared_ptr because they may
// start long after ParallelFor has returned.
class Work {
 public:
  Work(std::size_t count, std::function<void(std::size_t)> body)
      : count_(count), body_(std::move(body)) {}

  void Run(std::size_t index) {
    body_(index);
    std::lock_guard<std::mutex> lock(mu_);
    if (++finished_ == count_) all_finished_.notify_all();
  }

  // Runs unclaimed indices until there are none left. A late helper only touches next_.
  void RunUnclaimed() {
    for (;;) {
      const std::size_t index = next_.fetch_add(1, std::memory_order_relaxed);
      if (index >= count_) return;
      Run(index);
    }
  }

  // Every index is claimed once the caller's RunUnclaimed returns, so "all finished" is
  // exactly "every started call finished".
  void WaitAllFinished() {
    std::unique_lock<std::mutex> lock(mu_);
    all_finished_.wait(lock, [this] { return finished_ == count_; });
  }

 private:
  const std::size_t count_;
  const std::function<void(std::size_t)> body_;
  std::atomic<std::size_t> next_{1};  // index 0 belongs to the caller
  std::mutex mu_;
  std::condition_variable all_finished_;
  std::size_t finished_ = 0;
};

}  // namespace

void ParallelFor(Executor& executor, std::size_t count,
                 const std::function<void(std::size_t)>& body) {
  if (count == 0) return;
  if (count == 1) {
    body(0);
    return;
  }
  auto work = std::make_shared<Work>(count, body);
  for (std::size_t i = 1; i < count; ++i) {
    try {
      executor.Post([work] { work->RunUnclaimed(); });
    } catch (...) {
      // An executor that cannot take more tasks only costs parallelism: the caller claims
      // whatever no helper runs.
      break;
    }
  }
  work->Run(0);
  work->RunUnclaimed();
  work->WaitAllFinished();
}

}  // namespace settle::coordinator
