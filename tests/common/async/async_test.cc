// The coroutine runtime (common/async): what the HTTP layer and the driver build on.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "settle/async/await.h"
#include "settle/async/event.h"
#include "settle/async/io_threads.h"

namespace settle::async {
namespace {

TEST_CASE(
    "AwaitCallback resumes the coroutine, on its own executor, with what another thread reports",
    "[async]") {
  asio::io_context context;
  const std::thread::id runner = std::this_thread::get_id();
  std::thread reporter;
  const std::string got = RunToEnd(context, [&]() -> asio::awaitable<std::string> {
    std::string value = co_await AwaitCallback<std::string>([&](auto done) {
      reporter = std::thread([done = std::move(done)]() mutable { done("reported"); });
    });
    CHECK(std::this_thread::get_id() == runner);
    co_return value;
  }());
  reporter.join();
  CHECK(got == "reported");
}

TEST_CASE("AwaitCallback takes a result reported before the operation's start returns", "[async]") {
  asio::io_context context;
  const int got = RunToEnd(context, []() -> asio::awaitable<int> {
    co_return co_await AwaitCallback<int>([](auto done) { done(7); });
  }());
  CHECK(got == 7);
}

TEST_CASE("Offload runs blocking work on the pool and comes back with its result", "[async]") {
  asio::io_context context;
  asio::thread_pool pool(1);
  std::thread::id worked_on;
  const int got = RunToEnd(context, [&]() -> asio::awaitable<int> {
    co_return co_await Offload(pool, [&] {
      worked_on = std::this_thread::get_id();
      return 41 + 1;
    });
  }());
  pool.join();
  CHECK(got == 42);
  CHECK(worked_on != std::this_thread::get_id());
}

TEST_CASE("AwaitAll runs every task and returns their results in the tasks' order", "[async]") {
  IoThreads io(2, "async-test");
  io.Start();
  asio::io_context context;
  // The first task finishes last: it waits for an event the third one sets.
  Event third_done;
  std::vector<asio::awaitable<int>> tasks;
  tasks.push_back([](Event& e) -> asio::awaitable<int> {
    co_await e.Wait();
    co_return 1;
  }(third_done));
  tasks.push_back([]() -> asio::awaitable<int> { co_return 2; }());
  tasks.push_back([](Event& e) -> asio::awaitable<int> {
    e.Set();
    co_return 3;
  }(third_done));
  const std::vector<int> got = RunToEnd(context, AwaitAll(io.executor(), std::move(tasks)));
  CHECK(got == std::vector<int>{1, 2, 3});
  const std::vector<int> none =
      RunToEnd(context, AwaitAll(io.executor(), std::vector<asio::awaitable<int>>{}));
  CHECK(none.empty());
}

TEST_CASE("an event wakes every waiter once it is set, and a wait after that returns at once",
          "[async]") {
  IoThreads io(2, "async-test");
  io.Start();
  Event event;
  Event all_waiting;
  Event all_woken;
  std::atomic<int> waiting{0};
  std::atomic<int> woken{0};
  for (int i = 0; i < 3; ++i) {
    asio::co_spawn(
        io.context(),
        [&]() -> asio::awaitable<void> {
          if (++waiting == 3) all_waiting.Set();
          co_await event.Wait();
          if (++woken == 3) all_woken.Set();
        },
        asio::detached);
  }
  asio::io_context main;
  REQUIRE(RunToEnd(main, all_waiting.WaitFor(Duration(10'000))));
  CHECK_FALSE(event.is_set());
  CHECK(woken == 0);
  event.Set();
  CHECK(event.is_set());
  REQUIRE(RunToEnd(main, all_woken.WaitFor(Duration(10'000))));
  CHECK(woken == 3);
  const bool again = RunToEnd(main, [&]() -> asio::awaitable<bool> {
    co_await event.Wait();  // already set: at once
    co_return co_await event.WaitFor(Duration(0));
  }());
  CHECK(again);
}

TEST_CASE("WaitFor gives up after its timeout and says the event was not set", "[async]") {
  asio::io_context context;
  Event never;
  const bool set = RunToEnd(context, never.WaitFor(Duration(5)));
  CHECK_FALSE(set);
  CHECK_FALSE(never.is_set());
}

}  // namespace
}  // namespace settle::async
