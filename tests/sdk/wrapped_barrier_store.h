#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "settle/sdk/barrier_store.h"

namespace settle::sdk::test {

// Something that happens once, waited for with a deadline, so that a test that goes wrong
// fails instead of hanging. Thread-safe.
class Signal {
 public:
  void Notify() {
    std::lock_guard lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  bool IsSet() const {
    std::lock_guard lock(mu_);
    return set_;
  }
  // True once notified; false if `timeout` passed first.
  bool Wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return set_; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool set_ = false;
};

// A BarrierStore that passes everything to a real one, except that a test decides what Commit
// does: hold it (a transaction caught between its writes and its commit) or report a failure
// after the commit went through (a connection lost after COMMIT). Thread-safe if the hook is.
class WrappedBarrierStore final : public BarrierStore {
 public:
  // Given the real transaction; returns what Commit reports. Default: commit it.
  using CommitHook = std::function<Status(BarrierTransaction& real)>;

  explicit WrappedBarrierStore(BarrierStore& real, CommitHook commit = {})
      : real_(real), commit_(std::move(commit)) {}

  Result<std::unique_ptr<BarrierTransaction>> Begin() override {
    Result<std::unique_ptr<BarrierTransaction>> tx = real_.Begin();
    if (!tx) return tx.status();
    return std::unique_ptr<BarrierTransaction>(new Tx(std::move(tx).value(), commit_));
  }
  Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) override {
    return real_.DeleteCreatedBefore(cutoff, limit);
  }

  // The real store's transaction inside `tx` if this kind of store began it, else `tx`: what
  // SqliteBarrierStore::Connection and PostgresBarrierStore::Connection recognise.
  static BarrierTransaction& Unwrap(BarrierTransaction& tx) {
    auto* wrapped = dynamic_cast<Tx*>(&tx);
    return wrapped != nullptr ? *wrapped->real_ : tx;
  }

 private:
  class Tx final : public BarrierTransaction {
   public:
    Tx(std::unique_ptr<BarrierTransaction> real, const CommitHook& commit)
        : real_(std::move(real)), commit_(commit) {}
    Result<bool> InsertIfAbsent(const BarrierRow& row) override {
      return real_->InsertIfAbsent(row);
    }
    Result<std::optional<std::string>> ReasonOf(const std::string& gid,
                                                const std::string& branch_id, const std::string& op,
                                                const std::string& barrier_id) override {
      return real_->ReasonOf(gid, branch_id, op, barrier_id);
    }
    Status Commit() override { return commit_ ? commit_(*real_) : real_->Commit(); }
    void Rollback() override { real_->Rollback(); }

    std::unique_ptr<BarrierTransaction> real_;

   private:
    const CommitHook& commit_;
  };

  BarrierStore& real_;
  CommitHook commit_;
};

}  // namespace settle::sdk::test
