#pragma once

#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/sdk/client.h"  // the HTTP link most callers pass
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// Builds a saga and submits it in one call.
//
//   Saga saga(client, gid);
//   saga.Add(out + "/TransOut", out + "/TransOutCompensate", R"({"amount":30})")
//       .Add(in + "/TransIn", in + "/TransInCompensate", R"({"amount":30})");
//   Result<Outcome> outcome = saga.Submit();
//
// Lifetime: `client` must outlive it. Not thread-safe: one thread builds and submits a saga.
class Saga {
 public:
  Saga(CoordinatorLink& link, std::string gid) : link_(link), gid_(std::move(gid)) {}

  // A step: its action URL, its compensate URL ("" when there is nothing to undo) and the body
  // both are called with, byte for byte (empty: GET).
  Saga& Add(std::string action_url, std::string compensate_url, std::string payload);
  // Runs steps in parallel, each after the steps AddOrder names (none: all at once).
  Saga& EnableConcurrent();
  // Step `step` (0-based) runs only after `waits_for` have succeeded. Implies concurrent.
  Saga& AddOrder(int step, std::vector<int> waits_for);
  Saga& SetOptions(TransOptions options);
  TransOptions& options() { return options_; }

  // Submits the saga. Without wait_result: status submitted (the coordinator runs it). With
  // wait_result: succeed, failed (reason: why), or submitted when it is still running after
  // the first pass. Errors: InvalidArgument for a saga the coordinator refuses as malformed,
  // Conflict when the gid is taken by a finished transaction, Unavailable when the
  // coordinator cannot be reached.
  Result<Outcome> Submit();

  // The submit body as JSON, as the HTTP Client sends it (for logging and tests).
  std::string ToJson() const;

 private:
  GlobalCall ToCall() const;
  struct Step {
    std::string action;
    std::string compensate;
    std::string payload;
  };
  CoordinatorLink& link_;
  std::string gid_;
  std::vector<Step> steps_;
  bool concurrent_ = false;
  std::map<int, std::vector<int>> orders_;
  TransOptions options_;
};

}  // namespace settle::sdk
