#include "settle/async/event.h"

#include <atomic>

#include "settle/async/await.h"

namespace settle::async {

void Event::Set() {
  std::vector<std::function<void(bool)>> waiters;
  {
    std::lock_guard lock(mu_);
    if (set_) return;
    set_ = true;
    waiters.swap(waiters_);
  }
  for (auto& waiter : waiters) waiter(true);
}

bool Event::is_set() const {
  std::lock_guard lock(mu_);
  return set_;
}

void Event::OnSet(std::function<void(bool)> callback) {
  {
    std::lock_guard lock(mu_);
    if (!set_) {
      waiters_.push_back(std::move(callback));
      return;
    }
  }
  callback(true);
}

asio::awaitable<void> Event::Wait() {
  co_await AwaitCallback<bool>([this](auto done) { OnSet(std::move(done)); });
}

asio::awaitable<bool> Event::WaitFor(Duration timeout) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  // Whichever comes first, the event or the timer, completes the wait; the other finds
  // `finished` taken and does nothing.
  auto timer = std::make_shared<asio::steady_timer>(executor, timeout);
  auto finished = std::make_shared<std::atomic<bool>>(false);
  co_return co_await AwaitCallback<bool>([&](auto done) {
    auto shared_done = std::make_shared<decltype(done)>(std::move(done));
    timer->async_wait([finished, shared_done](const boost::system::error_code&) {
      if (!finished->exchange(true)) (*shared_done)(false);
    });
    OnSet([finished, shared_done, timer](bool) {
      if (finished->exchange(true)) return;
      (*shared_done)(true);
      // The timer belongs to the waiter's executor: cancelled there, not on this thread.
      asio::post(timer->get_executor(), [timer] { timer->cancel(); });
    });
  });
}

}  // namespace settle::async
