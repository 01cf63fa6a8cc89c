#include "read_slots.h"

#include <utility>

namespace settle::api {

asio::awaitable<ReadSlots::Slot> ReadSlots::Take() {
  std::shared_ptr<async::Event> turn;
  {
    const std::lock_guard lock(mu_);
    if (free_ > 0) {
      --free_;
      co_return Slot(this);
    }
    turn = std::make_shared<async::Event>();
    waiting_.push_back(turn);
  }
  // Release handed this waiter the slot it freed.
  co_await turn->Wait();
  co_return Slot(this);
}

void ReadSlots::Release() {
  std::shared_ptr<async::Event> next;
  {
    const std::lock_guard lock(mu_);
    if (waiting_.empty()) {
      ++free_;
      return;
    }
    next = std::move(waiting_.front());
    waiting_.pop_front();
  }
  next->Set();
}

}  // namespace settle::api
