#include "settle/core/periodic_thread.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

namespace settle {
namespace {

using namespace std::chrono_literals;

TEST_CASE("the work runs at start and then every interval until stopped", "[common]") {
  std::atomic<int> runs{0};
  PeriodicThread thread(Duration(10), [&runs] { ++runs; });
  thread.Start();
  for (int i = 0; i < 500 && runs < 3; ++i) std::this_thread::sleep_for(5ms);
  thread.Stop();  // joins the thread: nothing runs after it
  CHECK(runs >= 3);
}

TEST_CASE("stop wakes the thread from a long interval and from the work's own sleep", "[common]") {
  std::atomic<int> runs{0};
  std::atomic<bool> slept_through{false};
  PeriodicThread* self = nullptr;
  PeriodicThread thread(Duration(3'600'000), [&] {
    ++runs;
    if (self->Sleep(Duration(3'600'000))) slept_through = true;
  });
  self = &thread;
  thread.Start();
  for (int i = 0; i < 500 && runs < 1; ++i) std::this_thread::sleep_for(5ms);
  const auto start = std::chrono::steady_clock::now();
  thread.Stop();

  CHECK(std::chrono::steady_clock::now() - start < 5s);  // not an hour
  CHECK(runs == 1);
  CHECK_FALSE(slept_through);  // Sleep answered false: stopping
}

TEST_CASE("a stopped thread can start again", "[common]") {
  std::atomic<int> runs{0};
  PeriodicThread thread(Duration(3'600'000), [&runs] { ++runs; });
  thread.Start();
  for (int i = 0; i < 500 && runs < 1; ++i) std::this_thread::sleep_for(5ms);
  thread.Stop();
  thread.Start();
  for (int i = 0; i < 500 && runs < 2; ++i) std::this_thread::sleep_for(5ms);
  thread.Stop();
  CHECK(runs == 2);
}

}  // namespace
}  // namespace settle
