#pragma once

#include <optional>
#include <string>

#include "settle/calls/branch_caller.h"
#include "settle/drive/instance_lease.h"
#include "settle/drive/pass_runner.h"

namespace settle::coordinator {

// Runs a pass only for a transaction this instance owns (InstanceLease::Claim): a transaction
// another live instance drives is left to it (the pass returns with nothing due; if that
// instance dies, this one's lease poll brings the transaction back once it is claimable).
// A claim that must ask the database runs on `blocking` (null: on the calling thread).
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
// lease, and no call starts once the lease is not held, so that no call is still running
// when another instance may take the transaction over.
class FencedBranchCaller final : public BranchCaller {
 public:
  FencedBranchCaller(BranchCaller& inner, InstanceLease& lease) : inner_(inner), lease_(lease) {}

  asio::awaitable<std::vector<BranchOutcome>> CallAll(std::vector<BranchCall> calls) override;

 private:
  BranchCaller& inner_;
  InstanceLease& lease_;
};

}  // namespace settle::coordinator
