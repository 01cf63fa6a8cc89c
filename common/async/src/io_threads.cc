#include "settle/async/io_threads.h"

#include <pthread.h>

#include <algorithm>

namespace settle::async {

IoThreads::IoThreads(std::size_t threads, std::string name)
    : count_(threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency())),
      name_(std::move(name)),
      context_(static_cast<int>(count_)),
      work_(context_.get_executor()) {}

IoThreads::~IoThreads() { Stop(); }

void IoThreads::Start() {
  if (!threads_.empty()) return;
  for (std::size_t i = 0; i < count_; ++i) {
    threads_.emplace_back([this] { context_.run(); });
    // Named, so that `top -H` and /proc tell the I/O threads apart (15 characters at most).
    pthread_setname_np(threads_.back().native_handle(), name_.substr(0, 15).c_str());
  }
}

void IoThreads::Stop() {
  work_.reset();
  context_.stop();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

}  // namespace settle::async
