#pragma once

#include <string>
#include <vector>

#include "participant_client.h"
#include "settle/core/branch_result.h"
#include "settle/core/protocol.h"

namespace settle::checker {

// One call a check makes, and the answer a participant guarded by a correct barrier gives
// (docs/protocol.md §6.3).
struct PlannedCall {
  BranchOp op = BranchOp::kTry;
  BranchResult expected = BranchResult::kSuccess;
  std::string role;  // how the report names this call: "the second try"
  Signing signing = Signing::kSigned;
  // Expected to be refused for its signature (HTTP 401, gRPC UNAUTHENTICATED) instead of
  // answered `expected`.
  bool refused = false;
};

// One barrier guarantee, exercised on a gid of its own: `setup` runs, the state is read,
// `probe` runs, the state is read again. The guarantee holds when every call got its expected
// answer and both reads of the state are equal. `cleanup` runs last, unjudged, to release
// what the check left reserved.
struct Check {
  std::string name;       // "empty rollback"
  std::string subject;    // what `probe` does, for the report: "cancel without try"
  std::string effect;     // what equal states mean: "changed nothing"
  std::string violation;  // what different states mean: "changed the state"
  std::vector<PlannedCall> setup;
  std::vector<PlannedCall> probe;  // never empty
  std::vector<BranchOp> cleanup;
};

// The checks of one transaction type, in the order they run.
struct CheckPlan {
  TransType trans_type = TransType::kTcc;
  std::vector<Check> checks;
};

// Empty rollback, hanging try, duplicate try, duplicate confirm, cancel after try, duplicate
// cancel.
CheckPlan TccPlan();
// The same guarantees for a saga step: action for try, compensate for cancel (a saga has no
// confirm).
CheckPlan SagaPlan();

// With --signing-key: that phase 2 (a TCC's confirm, a saga's compensate) runs only when the
// coordinator signed it (docs/protocol.md §4.9): after a signed try (action), an unsigned one
// and a tampered one (signed, then its body changed) must be refused with 401 (a gRPC method:
// UNAUTHENTICATED) and change nothing.
std::vector<Check> SignatureChecks(TransType trans_type);

}  // namespace settle::checker
