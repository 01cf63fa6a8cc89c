#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <utility>

#include "forwarding_store.h"
#include "settle/storage/store.h"

namespace settle::testing {

// Wraps a store and, while told to, refuses every Commit with Unavailable before it reaches
// the inner store (a full disk, a broken volume), or the next one with a refusal of the test's.
// Reads pass through. Counts the commits and loads asked of it. A hook can run once just before the
// next Commit, to slip another writer's change in between a caller's read and its write.
class FailingStore final : public ForwardingStore {
 public:
  explicit FailingStore(storage::Store& inner) : ForwardingStore(inner) {}

  void FailCommits(bool on) { failing_ = on; }
  // The next Commit is answered `refusal` without reaching the inner store: what the store's own
  // checks might say (a value PostgreSQL cannot take, say).
  void RefuseNextCommit(Status refusal) {
    std::lock_guard lock(hook_mutex_);
    refusal_ = std::move(refusal);
  }
  int commits() const { return commits_; }
  int loads() const { return loads_; }
  void BeforeNextCommit(std::function<void()> hook) {
    std::lock_guard lock(hook_mutex_);
    hook_ = std::move(hook);
  }

  Status Commit(const storage::WriteBatch& batch) override {
    if (Status refused = BeforeCommit(); !refused.ok()) return refused;
    return inner().Commit(batch);
  }
  void CommitAsync(storage::WriteBatch batch, std::function<void(Status)> done) override {
    if (Status refused = BeforeCommit(); !refused.ok()) return done(refused);
    inner().CommitAsync(std::move(batch), std::move(done));
  }
  Result<std::optional<storage::Transaction>> Load(const std::string& gid) override {
    ++loads_;
    return inner().Load(gid);
  }

 private:
  // Counts the commit and runs the hook; Unavailable while told to fail.
  Status BeforeCommit() {
    ++commits_;
    std::function<void()> hook;
    Status refusal;
    {
      std::lock_guard lock(hook_mutex_);
      hook.swap(hook_);
      std::swap(refusal, refusal_);
    }
    if (hook) hook();
    if (!refusal.ok()) return refusal;
    if (failing_) return Status::Unavailable("injected storage failure");
    return Status::Ok();
  }

  std::atomic<bool> failing_{false};
  std::atomic<int> commits_{0};
  std::atomic<int> loads_{0};
  std::mutex hook_mutex_;
  std::function<void()> hook_;  // guarded by hook_mutex_
  Status refusal_;              // guarded by hook_mutex_
};

}  // namespace settle::testing
