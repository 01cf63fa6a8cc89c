#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_set>

namespace settle::drive {

// The transactions an operator paused through this instance, told to a pass that may be
// running for them: the pause is stored (GlobalRecord::paused) before it is signalled, and a
// pass reads it when it loads the transaction; a pass that loaded it before makes no further
// round of calls once it is signalled (TransactionDriver). A pass on another instance learns
// of it when it next loads the transaction.
//
// Thread-safe: every method from any thread. IsSignalled costs an atomic load while no pause is
// signalled.
class PauseSignals {
 public:
  void Signal(const std::string& gid) {
    const std::lock_guard lock(mu_);
    if (gids_.insert(gid).second) count_.fetch_add(1, std::memory_order_release);
  }
  // The pass saw the stored pause, or the transaction was resumed.
  void Clear(const std::string& gid) {
    if (count_.load(std::memory_order_acquire) == 0) return;
    const std::lock_guard lock(mu_);
    if (gids_.erase(gid) > 0) count_.fetch_sub(1, std::memory_order_release);
  }
  bool IsSignalled(const std::string& gid) const {
    if (count_.load(std::memory_order_acquire) == 0) return false;
    const std::lock_guard lock(mu_);
    return gids_.count(gid) > 0;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<std::string> gids_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace settle::drive
