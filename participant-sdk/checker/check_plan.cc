#include "check_plan.h"

namespace settle::checker {
namespace {

constexpr BranchResult kSuccess = BranchResult::kSuccess;
constexpr BranchResult kFailure = BranchResult::kFailure;
constexpr const char* kUnchanged = "changed nothing";
constexpr const char* kChanged = "changed the state";

std::string Article(const std::string& noun) {
  return noun.find_first_of("aeiou") == 0 ? "an" : "a";
}

// The guarantees a try/cancel pair (or an action/compensate pair) owes to the coordinator;
// `act` and `undo` name the ops in the report.
std::vector<Check> UndoChecks(BranchOp act_op, const std::string& act, BranchOp undo_op,
                              const std::string& undo) {
  return {
      {"empty " + std::string(undo_op == BranchOp::kCancel ? "rollback" : "compensate"),
       undo + " without " + act,
       kUnchanged,
       kChanged,
       {},
       {{undo_op, kSuccess, "the " + undo + " without " + act}},
       {}},
      {"hanging " + act,
       Article(act) + " " + act + " after its " + undo,
       kUnchanged,
       kChanged,
       {{undo_op, kSuccess, "the " + undo + " before it"}},
       {{act_op, kFailure, "the " + act + " after its " + undo}},
       {}},
      {"duplicate " + act,
       "a second " + act,
       kUnchanged,
       kChanged,
       {{act_op, kSuccess, "the first " + act}},
       {{act_op, kSuccess, "the second " + act}},
       {undo_op}},
      {undo + " after " + act,
       act + " then " + undo,
       "restored the state from before the " + act,
       "did not restore the state",
       {},
       {{act_op, kSuccess, "the " + act}, {undo_op, kSuccess, "the " + undo}},
       {}},
      {"duplicate " + undo,
       "a second " + undo,
       kUnchanged,
       kChanged,
       {{act_op, kSuccess, "the " + act}, {undo_op, kSuccess, "the first " + undo}},
       {{undo_op, kSuccess, "the second " + undo}},
       {}},
  };
}

}  // namespace

CheckPlan TccPlan() {
  CheckPlan plan{TransType::kTcc, UndoChecks(BranchOp::kTry, "try", BranchOp::kCancel, "cancel")};
  // Confirm goes after the duplicate try, in the order of the README's barrier table.
  plan.checks.insert(plan.checks.begin() + 3,
                     Check{"duplicate confirm",
                           "a second confirm",
                           kUnchanged,
                           kChanged,
                           {{BranchOp::kTry, kSuccess, "the try"},
                            {BranchOp::kConfirm, kSuccess, "the first confirm"}},
                           {{BranchOp::kConfirm, kSuccess, "the second confirm"}},
                           {}});
  return plan;
}

std::vector<Check> SignatureChecks(TransType trans_type) {
  const bool tcc = trans_type == TransType::kTcc;
  const BranchOp act_op = tcc ? BranchOp::kTry : BranchOp::kAction;
  const BranchOp phase2_op = tcc ? BranchOp::kConfirm : BranchOp::kCompensate;
  const BranchOp undo_op = tcc ? BranchOp::kCancel : BranchOp::kCompensate;
  const std::string act = tcc ? "try" : "action";
  const std::string phase2 = tcc ? "confirm" : "compensate";
  std::vector<Check> checks;
  for (const auto& [signing, adjective] :
       {std::pair{Signing::kUnsigned, "unsigned"}, std::pair{Signing::kTampered, "tampered"}}) {
    checks.push_back(Check{
        std::string(adjective) + " " + phase2,
        Article(adjective) + " " + adjective + " " + phase2,
        kUnchanged,
        kChanged,
        {{act_op, kSuccess, "the " + act}},
        {{phase2_op, kSuccess, "the " + std::string(adjective) + " " + phase2, signing, true}},
        {undo_op}});
  }
  return checks;
}

CheckPlan SagaPlan() {
  return {TransType::kSaga,
          UndoChecks(BranchOp::kAction, "action", BranchOp::kCompensate, "compensate")};
}

}  // namespace settle::checker
