#include "settle/coordinator/leased_pass_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "settle/coordinator/transaction_driver.h"

namespace settle::coordinator {

PassResult LeasedPassRunner::RunPass(const std::string& gid,
                                     std::optional<storage::Transaction> stored,
                                     std::stop_token stop) {
  Result<bool> owned = lease_.Claim(gid);
  if (!owned) {
    if (owned.status().code() == StatusCode::kNotFound) return {};
    spdlog::warn("gid={} not claimed, retrying later: {}", gid, owned.status().ToString());
    return {clock_.Now() + TransactionDriver::kStorageRetryDelay, std::nullopt};
  }
  if (!*owned) {
    spdlog::debug("gid={} is driven by another instance", gid);
    return {};
  }
  PassResult result = inner_.RunPass(gid, std::move(stored), stop);
  if (!result.next_due) lease_.Forget(gid);
  return result;
}

std::vector<BranchOutcome> FencedBranchCaller::CallAll(const std::vector<BranchCall>& calls) {
  const Duration remaining = lease_.Remaining();
  if (remaining <= Duration(0)) {
    BranchOutcome lost;
    lost.detail = "not called: this coordinator's instance lease is not held";
    return std::vector<BranchOutcome>(calls.size(), lost);
  }
  std::vector<BranchCall> fenced = calls;
  for (BranchCall& call : fenced) call.timeout = std::min(call.timeout, remaining);
  return inner_.CallAll(fenced);
}

}  // namespace settle::coordinator
