#pragma once

#include <atomic>
#include <cstdint>

namespace settle {

// A one-time signal from one thread to one waiting thread, which may destroy the Completion as
// soon as Wait() returns: the signalling thread touches nothing of it after Signal's wake-up.
//
// This is what a caller blocked on its own answer needs. A mutex and condition variable shared
// by many such callers makes each woken caller block again on the mutex that the signalling
// thread still holds while it wakes the next one: two context switches per caller instead of
// one. Here Signal() is a store and one futex wake, and Wait() sleeps on the futex.
class Completion {
 public:
  Completion() = default;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // Blocks until Signal() has been called; returns at once if it has been. Everything the
  // signalling thread wrote before Signal() is visible after Wait().
  void Wait();

  // Wakes the waiter. Call once.
  void Signal();

 private:
  std::atomic<std::uint32_t> state_{0};
};

}  // namespace settle
