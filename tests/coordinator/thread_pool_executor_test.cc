#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>

#include "settle/coordinator/executor.h"

namespace settle::coordinator {
namespace {

TEST_CASE("ThreadPoolExecutor runs every posted task before Join returns",
          "[coordinator][executor]") {
  ThreadPoolExecutor executor(3);
  std::atomic<int> ran{0};

  for (int i = 0; i < 1000; ++i) executor.Post([&ran] { ++ran; });
  executor.Join();

  CHECK(ran == 1000);
}

TEST_CASE("ThreadPoolExecutor runs tasks that tasks post before Join returns",
          "[coordinator][executor]") {
  ThreadPoolExecutor executor(2);
  std::atomic<int> ran{0};

  executor.Post([&] {
    ++ran;
    executor.Post([&] {
      ++ran;
      executor.Post([&ran] { ++ran; });
    });
  });
  executor.Join();

  CHECK(ran == 3);
}

TEST_CASE("ThreadPoolExecutor's Join may be called again, and before the destructor",
          "[coordinator][executor]") {
  std::atomic<int> ran{0};
  {
    ThreadPoolExecutor executor(2);
    executor.Post([&ran] { ++ran; });
    executor.Join();
    executor.Join();
  }
  CHECK(ran == 1);
}

TEST_CASE("ThreadPoolExecutor's destructor waits for queued tasks", "[coordinator][executor]") {
  std::atomic<int> ran{0};
  {
    ThreadPoolExecutor executor(1);
    for (int i = 0; i < 100; ++i) executor.Post([&ran] { ++ran; });
  }
  CHECK(ran == 100);
}

TEST_CASE("ThreadPoolExecutor runs tasks on its threads at the same time",
          "[coordinator][executor]") {
  ThreadPoolExecutor executor(2);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> met{0};

  // Each task waits for the other: only two threads running at once let both pass.
  for (int i = 0; i < 2; ++i) {
    executor.Post([&] {
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      cv.notify_all();
      if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; })) ++met;
    });
  }
  executor.Join();

  CHECK(met == 2);
}

}  // namespace
}  // namespace settle::coordinator
