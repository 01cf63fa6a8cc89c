#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <utility>

#include "settle/storage/store.h"

namespace settle::testing {

// Wraps a store and, while told to, refuses every Commit with Unavailable before it reaches
// the inner store (a full disk, a broken volume). Reads pass through. Counts the commits and
// loads asked of it. A hook can run once just before the next Commit, to slip another writer's
// change in between a caller's read and its write.
class FailingStore final : public storage::Store {
 public:
  explicit FailingStore(storage::Store& inner) : inner_(inner) {}

  void FailCommits(bool on) { failing_ = on; }
  int commits() const { return commits_; }
  int loads() const { return loads_; }
  void BeforeNextCommit(std::function<void()> hook) {
    std::lock_guard lock(hook_mutex_);
    hook_ = std::move(hook);
  }

  Status Commit(const storage::WriteBatch& batch) override {
    if (Status refused = BeforeCommit(); !refused.ok()) return refused;
    return inner_.Commit(batch);
  }
  void CommitAsync(storage::WriteBatch batch, std::function<void(Status)> done) override {
    if (Status refused = BeforeCommit(); !refused.ok()) return done(refused);
    inner_.CommitAsync(std::move(batch), std::move(done));
  }
  Result<std::optional<storage::Transaction>> Load(const std::string& gid) override {
    ++loads_;
    return inner_.Load(gid);
  }
  Result<storage::ListPage> List(const storage::ListQuery& query) override {
    return inner_.List(query);
  }
  Result<std::vector<storage::DueEntry>> ListUnfinished() override {
    return inner_.ListUnfinished();
  }
  Result<std::vector<storage::UnfinishedCount>> CountUnfinished() override {
    return inner_.CountUnfinished();
  }
  Result<std::vector<std::string>> ListFinishedBefore(TimePoint cutoff,
                                                      std::size_t limit) override {
    return inner_.ListFinishedBefore(cutoff, limit);
  }
  Result<std::vector<storage::UndoneRollback>> ListUndoneRollbacks(TimePoint finished_since,
                                                                   std::int64_t after_id,
                                                                   std::size_t limit) override {
    return inner_.ListUndoneRollbacks(finished_since, after_id, limit);
  }
  Result<std::vector<storage::Subscriber>> Subscribers(const std::string& topic) override {
    return inner_.Subscribers(topic);
  }
  Result<std::vector<storage::Topic>> ListTopics() override { return inner_.ListTopics(); }
  storage::StoreStats Stats() const override { return inner_.Stats(); }

 private:
  // Counts the commit and runs the hook; Unavailable while told to fail.
  Status BeforeCommit() {
    ++commits_;
    std::function<void()> hook;
    {
      std::lock_guard lock(hook_mutex_);
      hook.swap(hook_);
    }
    if (hook) hook();
    if (failing_) return Status::Unavailable("injected storage failure");
    return Status::Ok();
  }

  storage::Store& inner_;
  std::atomic<bool> failing_{false};
  std::atomic<int> commits_{0};
  std::atomic<int> loads_{0};
  std::mutex hook_mutex_;
  std::function<void()> hook_;  // guarded by hook_mutex_
};

}  // namespace settle::testing
