#include "settle/coordinator/executor.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <mutex>
#include <utility>

namespace settle::coordinator {

struct ThreadPoolExecutor::Impl {
  explicit Impl(std::size_t threads) : pool(threads) {}

  boost::asio::thread_pool pool;
  // Serializes Join so that two threads joining at once do not both join the asio threads.
  std::mutex join_mu;
  bool joined = false;
};

ThreadPoolExecutor::ThreadPoolExecutor(std::size_t threads)
    : impl_(std::make_unique<Impl>(threads == 0 ? 1 : threads)) {}

// asio's own destructor stops the pool before joining, which would drop queued tasks; the
// contract is to finish them, so join first.
ThreadPoolExecutor::~ThreadPoolExecutor() { Join(); }

// A task that throws ends the process, as it would on a std::thread: tasks report failures
// through their own results. Tasks posted after Join are never run: the threads are gone.
void ThreadPoolExecutor::Post(std::function<void()> task) {
  boost::asio::post(impl_->pool, std::move(task));
}

void ThreadPoolExecutor::Join() {
  std::lock_guard<std::mutex> lock(impl_->join_mu);
  if (impl_->joined) return;
  // Without a prior stop(), asio's join waits until no work is queued or running, including
  // tasks that running tasks post.
  impl_->pool.join();
  impl_->joined = true;
}

}  // namespace settle::coordinator
