#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include "settle/async/asio.h"
#include "settle/async/event.h"

namespace settle::api {

// How many of the reads that may load a large transaction or list (query, all, topics) build
// their answer at once: the others wait their turn in a coroutine, holding no thread, so that
// a burst of them holds a few loads in memory, not one per request (docs/operations.md,
// "Hostile clients").
//
// Thread-safety: every method from any thread. It must outlive every slot taken.
class ReadSlots {
 public:
  explicit ReadSlots(std::size_t slots) : free_(slots == 0 ? 1 : slots) {}

  // A taken slot, given back when destroyed.
  class Slot {
   public:
    explicit Slot(ReadSlots* owner) : owner_(owner) {}
    Slot(Slot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->Release();
    }

   private:
    ReadSlots* owner_;
  };

  // Returns once a slot is free, oldest waiter first.
  asio::awaitable<Slot> Take();

 private:
  // Hands the slot to the oldest waiter, or frees it.
  void Release();

  std::mutex mu_;
  std::size_t free_;                                   // guarded by mu_
  std::deque<std::shared_ptr<async::Event>> waiting_;  // guarded by mu_
};

}  // namespace settle::api
