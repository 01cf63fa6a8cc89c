#include "settle/core/completion.h"

#include <catch2/catch.hpp>

#include <memory>
#include <thread>
#include <vector>

namespace settle {
namespace {

TEST_CASE("Wait returns at once after Signal", "[common]") {
  Completion done;
  done.Signal();
  done.Wait();
  SUCCEED();
}

TEST_CASE("Wait blocks until another thread signals, and sees what it wrote", "[common]") {
  Completion done;
  int answer = 0;
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    answer = 42;
    done.Signal();
  });

  done.Wait();

  CHECK(answer == 42);
  signaller.join();
}

TEST_CASE("a waiter may free its completion as soon as Wait returns", "[common]") {
  // One signalling thread answers many short-lived completions, each freed by its waiter the
  // moment it wakes: under a memory checker this would show any touch after the wake.
  constexpr int kRounds = 2000;
  std::vector<Completion*> slots(kRounds, nullptr);
  std::vector<std::atomic<bool>> ready(kRounds);
  std::thread signaller([&] {
    for (int i = 0; i < kRounds; ++i) {
      while (!ready[i].load(std::memory_order_acquire)) std::this_thread::yield();
      slots[i]->Signal();
    }
  });
  int woken = 0;
  for (int i = 0; i < kRounds; ++i) {
    auto completion = std::make_unique<Completion>();
    slots[i] = completion.get();
    ready[i].store(true, std::memory_order_release);
    completion->Wait();
    ++woken;
  }
  signaller.join();
  CHECK(woken == kRounds);
}

}  // namespace
}  // namespace settle
