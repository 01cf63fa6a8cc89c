#pragma once

#include <optional>
#include <string>

#include "settle/calls/branch_caller.h"
#include "settle/drive/instance_lease.h"
#include "settle/drive/pass_runner.h"

namespace settle::drive {

// Runs a pass only for a transaction this instance owns (InstanceLease::Claim): a transaction
// another live instance drives is left to it (the pass returns with nothing due; if that
// instance dies, this one's lease poll brings the transaction back once it is claimable).
// A claim that must ask the database runs on `blocking` (null: on the calling thread).
//
// Lifetime: `inner`, `lease`, `clock` and `blocking` must outlive it, and it every pass still
// running. Thread-safe: passes for different gids at once, as the inner runner allows.
class LeasedPassRunner final : public PassRunner {
 public:
  LeasedPassRunner(PassRunner& inner, InstanceLease& lease, const Clock& clock,
                   asio::thread_pool* blocking)
      : inner_(inner), lease_(lease), clock_(clock), blocking_(blocking) {}

  asio::awaitable<PassResult> RunPass(std::string gid, std::optional<storage::Transaction> stored,
                                      std::stop_token stop) override;

 private:
  PassRunner& inner_;
  InstanceLease& lease_;
  const Clock& clock_;
  asio::thread_pool* blocking_;
};

// Fences branch calls by the instance lease: each call's timeout is cut to what is left of the
// lease, and no call starts once the lease is not held, or once it has lapsed since the pass
// claimed the transaction (InstanceLease::StillOwns: an instance paused for longer than its
// lease renews it on waking, but another may have claimed the transaction meanwhile), so
// that no call is still running when another instance may take the transaction over, and
// one transaction's calls come from one instance at a time. A call the fence refuses was
// not made: nothing was learnt (no attempt, no failure), and the pass looks again after
// `retry` (when it claims the transaction again, or finds another instance driving it).
//
// Lifetime: `inner`, `lease` and `clock` must outlive it, and it every CallAll still running.
// Thread-safe: CallAll from any thread, at once.
class FencedBranchCaller final : public calls::BranchCaller {
 public:
  FencedBranchCaller(calls::BranchCaller& inner, InstanceLease& lease, const Clock& clock,
                     Duration retry = Duration(1000))
      : inner_(inner), lease_(lease), clock_(clock), retry_(retry) {}

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override;

 private:
  calls::BranchCaller& inner_;
  InstanceLease& lease_;
  const Clock& clock_;
  const Duration retry_;
};

}  // namespace settle::drive
