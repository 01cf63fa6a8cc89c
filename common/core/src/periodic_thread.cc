#include "settle/core/periodic_thread.h"

#include <utility>

namespace settle {

PeriodicThread::PeriodicThread(Duration interval, std::function<void()> work)
    : interval_(interval), work_(std::move(work)) {}

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void PeriodicThread::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PeriodicThread::Sleep(Duration d) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, d, [this] { return stopping_; });
}

void PeriodicThread::Loop() {
  do {
    work_();
  } while (Sleep(interval_));
}

}  // namespace settle
