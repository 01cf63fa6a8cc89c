#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "settle/async/asio.h"

// Bridges between coroutines and the rest: an operation that calls back from another thread
// (a store's commit thread), blocking work on a thread pool, and several coroutines awaited at
// once. Each resumes the awaiting coroutine on its own executor, never on the thread that
// completed the work.
namespace settle::async {

// Starts an operation that reports its result once through a callback, from any thread, and
// suspends until it does: `co_await AwaitCallback<Status>([&](auto done) {
// store.CommitAsync(batch, std::move(done)); })`. The callback may also be called before
// `start` returns. (Like any suspended coroutine, the waiting one keeps its io_context's run()
// from returning.)
template <typename T, typename Start>
asio::awaitable<T> AwaitCallback(Start start) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(T)>(
      [start = std::move(start)](auto handler) mutable {
        using Handler = decltype(handler);
        auto shared = std::make_shared<Handler>(std::move(handler));
        const asio::any_io_executor executor = asio::get_associated_executor(*shared);
        start([shared, executor](T value) {
          asio::post(executor,
                     [shared, value = std::move(value)]() mutable { (*shared)(std::move(value)); });
        });
      },
      asio::use_awaitable);
}

// Runs `work` (which may block) on `pool` and resumes with its result.
template <typename Work>
asio::awaitable<std::invoke_result_t<Work>> Offload(asio::thread_pool& pool, Work work) {
  using T = std::invoke_result_t<Work>;
  co_return co_await AwaitCallback<T>([&pool, work = std::move(work)](auto done) mutable {
    asio::post(pool, [work = std::move(work), done = std::move(done)]() mutable { done(work()); });
  });
}

// Runs every task concurrently, each on a strand of its own on `executor`, and resumes once
// all have finished, with their results in the tasks' order. A task must not throw (its
// exception would end the process).
template <typename T>
asio::awaitable<std::vector<T>> AwaitAll(asio::any_io_executor executor,
                                         std::vector<asio::awaitable<T>> tasks) {
  struct State {
    std::vector<std::optional<T>> results;
    std::atomic<std::size_t> left{0};
  };
  auto state = std::make_shared<State>();
  state->results.resize(tasks.size());
  state->left = tasks.size();
  if (!tasks.empty()) {
    co_await AwaitCallback<bool>([&](auto done) {
      auto finish = std::make_shared<decltype(done)>(std::move(done));
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        asio::co_spawn(asio::make_strand(executor), std::move(tasks[i]),
                       [state, finish, i](std::exception_ptr error, T result) {
                         if (error) std::terminate();
                         state->results[i] = std::move(result);
                         if (state->left.fetch_sub(1) == 1) (*finish)(true);
                       });
      }
    });
  }
  std::vector<T> out;
  out.reserve(state->results.size());
  for (std::optional<T>& result : state->results) out.push_back(std::move(*result));
  co_return out;
}

// Runs `task` to its end on `context`, running the context on the calling thread until then:
// for tests and tools that call coroutines from plain code. The context must not be run by
// other threads meanwhile.
template <typename T>
T RunToEnd(asio::io_context& context, asio::awaitable<T> task) {
  std::optional<T> result;
  std::exception_ptr error;
  asio::co_spawn(context, std::move(task), [&](std::exception_ptr e, T value) {
    error = e;
    if (!e) result = std::move(value);
  });
  context.restart();
  context.run();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

}  // namespace settle::async
