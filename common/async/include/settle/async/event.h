#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "settle/async/asio.h"
#include "settle/core/clock.h"

namespace settle::async {

// A one-shot event that coroutines wait for without holding a thread: Set() from any thread
// resumes every waiter, each on its own executor.
//
// Thread-safety: every method from any thread. The event must outlive its waiters.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void Set();
  bool is_set() const;

  // Returns once the event is set (at once if it is).
  asio::awaitable<void> Wait();
  // The same, giving up after `timeout`: true if the event was set.
  asio::awaitable<bool> WaitFor(Duration timeout);

 private:
  // Adds a callback run (with true) when the event is set; runs it at once if it is.
  void OnSet(std::function<void(bool)> callback);

  mutable std::mutex mu_;
  bool set_ = false;                                // guarded by mu_
  std::vector<std::function<void(bool)>> waiters_;  // guarded by mu_
};

}  // namespace settle::async
