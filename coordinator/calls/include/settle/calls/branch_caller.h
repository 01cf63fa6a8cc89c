#pragma once

#include <vector>

#include "settle/async/asio.h"
#include "settle/async/await.h"
#include "settle/engine/branch_call.h"

namespace settle::calls {

// Makes branch calls. The seam where tests script participants' answers.
//
// Thread-safety: CallAll may be called from many coroutines at once.
class BranchCaller {
 public:
  virtual ~BranchCaller() = default;

  // Makes every call, concurrently, and returns their outcomes in the same order once every
  // call has one. Never throws; every failure is an outcome.
  virtual asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) = 0;
};

// What a caller's CallAll does with its one-call coroutine `call`: every call at once, each a
// coroutine of its own, the outcomes in the calls' order (one call is simply awaited).
template <typename Call>
asio::awaitable<std::vector<engine::BranchOutcome>> CallEach(std::vector<engine::BranchCall> calls,
                                                             Call call) {
  if (calls.size() == 1) {
    std::vector<engine::BranchOutcome> one;
    engine::BranchOutcome outcome = co_await call(std::move(calls[0]));
    one.push_back(std::move(outcome));
    co_return one;
  }
  std::vector<asio::awaitable<engine::BranchOutcome>> tasks;
  tasks.reserve(calls.size());
  for (engine::BranchCall& c : calls) tasks.push_back(call(std::move(c)));
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  co_return co_await async::AwaitAll(executor, std::move(tasks));
}

}  // namespace settle::calls
