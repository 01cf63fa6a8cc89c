#pragma once

#include <chrono>
#include <thread>

namespace settle::testing {

// Polls `done` until it returns true or `timeout` passes (on the real steady clock; tests
// only), sleeping `every` between polls. Returns whether it became true. `done` is polled at
// least once and after each sleep, so a timeout that passes during a sleep still gets a last
// poll. For a test that waits for what another thread or process does; a test on a FakeClock
// steps the clock instead.
template <typename Done>
bool Eventually(Done done, std::chrono::milliseconds timeout = std::chrono::seconds(15),
                std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace settle::testing
