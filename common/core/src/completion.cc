#include "settle/core/completion.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace settle {
namespace {

// The futex word is the atomic's own storage: std::atomic<uint32_t> is lock-free and has the
// size and alignment of a uint32_t on Linux.
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

long Futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, nullptr, nullptr, 0);
}

}  // namespace

void Completion::Wait() {
  // FUTEX_WAIT returns at once if the word is no longer 0, and may also return spuriously
  // (EINTR, or a wake meant for an earlier object at this address): the loop re-checks.
  while (state_.load(std::memory_order_acquire) == 0) {
    Futex(&state_, FUTEX_WAIT_PRIVATE, 0);
  }
}

void Completion::Signal() {
  state_.store(1, std::memory_order_release);
  // The waiter may already have seen the store, returned and freed this object: the wake then
  // reaches no one, or at worst wakes a later futex waiter at the same address spuriously,
  // which every futex user re-checks for. Nothing else of the object is touched.
  Futex(&state_, FUTEX_WAKE_PRIVATE, 1);
}

}  // namespace settle
