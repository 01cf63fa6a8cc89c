#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "settle/core/clock.h"

namespace settle {

// A background thread that runs `work` at Start() and then every `interval` until Stop():
// the shape of every housekeeping job (retention, barrier cleanup). Stop() wakes it from its
// wait at once; a `work` that pauses between steps uses Sleep() so that it wakes too.
//
// Thread-safety: Start and Stop from one thread; Sleep from `work`.
class PeriodicThread {
 public:
  PeriodicThread(Duration interval, std::function<void()> work);
  ~PeriodicThread();  // Stop()
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void Start();  // no-op if running
  // Wakes the thread and joins it; a `work` in progress finishes (or returns from Sleep)
  // first. Start() may follow.
  void Stop();

  // Waits up to `d`; false once Stop() was called (the work should then return).
  bool Sleep(Duration d);

 private:
  void Loop();

  const Duration interval_;
  const std::function<void()> work_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace settle
