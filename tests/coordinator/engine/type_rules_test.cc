// A transaction type is one descriptor, defined in its home and looked up by type everywhere
// else (type_rules.h).
#include "settle/engine/type_rules.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "transaction_builder.h"

namespace settle::engine {
namespace {

using testing::kT0;
using testing::TransactionBuilder;

TransType TypeAt(std::size_t value) { return static_cast<TransType>(value); }

TEST_CASE("every transaction type has one descriptor, and it is the type's", "[engine][types]") {
  std::set<TransType> listed;
  for (const TypeRules* rules : AllTypeRules()) {
    CHECK(listed.insert(rules->type).second);
    CHECK(&RulesOf(rules->type) == rules);
  }
  CHECK(listed.size() == kTransTypeCount);
  for (std::size_t value = 0; value < kTransTypeCount; ++value) {
    const TypeRules& rules = RulesOf(TypeAt(value));
    CHECK(rules.type == TypeAt(value));
    // What the coordinator and the driver call for every type is there.
    CHECK(rules.decide != nullptr);
    CHECK(rules.rows_still_called != nullptr);
    CHECK(rules.failure_of != nullptr);
    CHECK_FALSE(rules.article_name.empty());
  }
}

TEST_CASE("a descriptor's requests come with what they need", "[engine][types]") {
  for (const TypeRules* rules : AllTypeRules()) {
    INFO(ToString(rules->type));
    // A type that takes registerBranch names its URLs and stores rows for them.
    CHECK(rules->takes_register_branch == (rules->registered_rows != nullptr));
    CHECK(rules->takes_register_branch == (rules->branch_urls != BranchUrls::kNone));
    // A submit that creates the transaction builds its rows; one that only moves a prepared
    // one needs a prepare.
    CHECK(rules->submit.creates == (rules->submitted_rows != nullptr));
    if (!rules->submit.creates) CHECK((rules->takes_prepare || rules->takes_prepare_workflow));
    // A submit that records how it ended neither creates nor moves anything.
    if (rules->submit.records_outcome) {
      CHECK_FALSE(rules->submit.creates);
      CHECK_FALSE(rules->submit.moves_prepared);
    }
    // Content is compared on a repeat only where a request carries it.
    if (rules->submit.carries_content) CHECK(rules->carries_steps);
    // A back-check address comes with steps, or is a workflow's resume callback.
    if (rules->carries_query_prepared) {
      CHECK((rules->carries_steps || rules->takes_prepare_workflow));
    }
  }
}

TEST_CASE("what a participant's FAILURE means is its type's", "[engine][types]") {
  const auto failure = [](TransType type, BranchOp op) { return RulesOf(type).failure_of(op); };
  // A saga's action rolls the saga back; its compensation must succeed in the end.
  CHECK(failure(TransType::kSaga, BranchOp::kAction) == FailureMeaning::kFinal);
  CHECK(failure(TransType::kSaga, BranchOp::kCompensate) == FailureMeaning::kParticipantBug);
  // A message's back-check says its local transaction did not commit; a receiver is asked again.
  CHECK(failure(TransType::kMsg, BranchOp::kMsg) == FailureMeaning::kFinal);
  CHECK(failure(TransType::kMsg, BranchOp::kAction) == FailureMeaning::kRetried);
  // Phase 2 must succeed.
  for (BranchOp op : {BranchOp::kConfirm, BranchOp::kCancel}) {
    CHECK(failure(TransType::kTcc, op) == FailureMeaning::kParticipantBug);
  }
  for (BranchOp op : {BranchOp::kCommit, BranchOp::kRollback}) {
    CHECK(failure(TransType::kXa, op) == FailureMeaning::kParticipantBug);
  }
}

TEST_CASE("an operation a type does not take is refused naming the types that take it",
          "[engine][types]") {
  const Status prepare = RefuseType("prepare", [](const TypeRules& r) { return r.takes_prepare; });
  CHECK(prepare.code() == StatusCode::kInvalidArgument);
  CHECK(prepare.message() == "trans_type: prepare applies to tcc, xa and msg transactions only");
  const Status registration =
      RefuseType("registerBranch", [](const TypeRules& r) { return r.takes_register_branch; });
  CHECK(registration.message() ==
        "trans_type: registerBranch applies to tcc, xa and workflow transactions only");
  const Status workflow =
      RefuseType("prepareWorkflow", [](const TypeRules& r) { return r.takes_prepare_workflow; });
  CHECK(workflow.message() == "trans_type: prepareWorkflow applies to workflow transactions only");
}

TEST_CASE("the descriptor drives its type: Decide is the home's decision", "[engine][types]") {
  auto tcc = TransactionBuilder::Tcc(GlobalStatus::kSubmitted, kT0).TccBranch("01").Build();
  CHECK(Decide(tcc, kT0).calls.size() == 1);
  CHECK(RulesOf(TransType::kTcc).decide(tcc, kT0).calls == Decide(tcc, kT0).calls);
  // A saga and a workflow have no default deadline.
  for (const TypeRules* rules : AllTypeRules()) {
    CHECK(rules->default_deadline ==
          (rules->type != TransType::kSaga && rules->type != TransType::kWorkflow));
  }
}

}  // namespace
}  // namespace settle::engine
