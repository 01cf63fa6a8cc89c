#pragma once

#include <string>

#include "sdk_bank.h"
#include "settle/sdk/workflow.h"

namespace settle::testing {

// A transfer as two TCC steps: out of the payer's account, then (by default) into the payee's.
struct Transfer {
  std::string out_body;
  std::string second_side = "TransIn";
  std::string second_body;
  const SdkBank* bank = nullptr;
};

// The workflow's code (a free coroutine: a lambda that is one must not capture).
inline asio::awaitable<Result<std::string>> TransferSteps(const Transfer* t, sdk::Workflow& wf,
                                                          std::string) {
  const auto urls = [t](const std::string& side) {
    return sdk::Workflow::TccUrls{.try_url = t->bank->Url("/" + side + "Try"),
                                  .confirm_url = t->bank->Url("/" + side + "Confirm"),
                                  .cancel_url = t->bank->Url("/" + side + "Cancel")};
  };
  sdk::WorkflowStep out = wf.TccStep("trans-out", urls("TransOut"), t->out_body);
  Result<std::string> frozen = co_await wf.Do(out);
  if (!frozen) co_return frozen.status();
  sdk::WorkflowStep in = wf.TccStep("second", urls(t->second_side), t->second_body);
  Result<std::string> credited = co_await wf.Do(in);
  if (!credited) co_return credited.status();
  co_return std::string("moved");
}

// Registers TransferSteps over `t` as workflow "transfer".
inline Status RegisterTransfer(sdk::Workflows& workflows, const Transfer* t) {
  return workflows.Register("transfer", [t](sdk::Workflow& wf, std::string input) {
    return TransferSteps(t, wf, std::move(input));
  });
}

}  // namespace settle::testing
