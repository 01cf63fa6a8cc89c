#include "settle/drive/leased_pass_runner.h"

#include <spdlog/spdlog.h>

#include "settle/async/await.h"

#include <algorithm>

#include "settle/drive/transaction_driver.h"

namespace settle::drive {

asio::awaitable<PassResult> LeasedPassRunner::RunPass(std::string gid,
                                                      std::optional<storage::Transaction> stored,
                                                      std::stop_token stop) {
  // Plain statements around the co_await: GCC 12 destroys the result of a conditional
  // expression that holds a co_await twice.
  Result<bool> owned;
  if (blocking_ == nullptr) {
    owned = lease_.Claim(gid);
  } else {
    owned = co_await async::Offload(*blocking_, [this, &gid] { return lease_.Claim(gid); });
  }
  if (!owned) {
    if (owned.status().code() == StatusCode::kNotFound) co_return PassResult{};
    spdlog::warn("gid={} not claimed, retrying later: {}", gid, owned.status().ToString());
    co_return PassResult{clock_.Now() + TransactionDriver::kStorageRetryDelay, std::nullopt};
  }
  if (!*owned) {
    spdlog::debug("gid={} is driven by another instance", gid);
    co_return PassResult{};
  }
  PassResult result = co_await inner_.RunPass(gid, std::move(stored), stop);
  if (!result.next_due) lease_.Forget(gid);
  co_return result;
}

asio::awaitable<std::vector<engine::BranchOutcome>> FencedBranchCaller::CallAll(
    std::vector<engine::BranchCall> calls) {
  const auto refuse = [this, &calls](const char* why) {
    engine::BranchOutcome refused;
    refused.detail = why;
    refused.not_called_until = clock_.Now() + retry_;
    return std::vector<engine::BranchOutcome>(calls.size(), refused);
  };
  const Duration remaining = lease_.Remaining();
  if (remaining <= Duration(0)) {
    co_return refuse("this coordinator's instance lease is not held");
  }
  for (const engine::BranchCall& call : calls) {
    if (!lease_.StillOwns(call.gid)) {
      co_return refuse("this instance's claim on the transaction lapsed with its lease");
    }
  }
  for (engine::BranchCall& call : calls) call.timeout = std::min(call.timeout, remaining);
  co_return co_await inner_.CallAll(std::move(calls));
}

}  // namespace settle::drive
