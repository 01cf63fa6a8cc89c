#include "settle/core/protocol.h"

#include <catch2/catch.hpp>
#include <string>

namespace settle {
namespace {

TEST_CASE("protocol names round-trip", "[common][protocol]") {
  for (auto s : {GlobalStatus::kPrepared, GlobalStatus::kSubmitted, GlobalStatus::kAborting,
                 GlobalStatus::kSucceed, GlobalStatus::kFailed}) {
    CHECK(ParseGlobalStatus(ToString(s)) == s);
  }
  for (auto op : {BranchOp::kTry, BranchOp::kConfirm, BranchOp::kCancel, BranchOp::kAction,
                  BranchOp::kCompensate, BranchOp::kMsg, BranchOp::kCommit, BranchOp::kRollback,
                  BranchOp::kBusiness, BranchOp::kResume}) {
    CHECK(ParseBranchOp(ToString(op)) == op);
  }
  CHECK(ParseTransType("tcc") == TransType::kTcc);
  CHECK(ParseTransType("saga") == TransType::kSaga);
  CHECK(ParseTransType("msg") == TransType::kMsg);
  CHECK(ParseTransType("xa") == TransType::kXa);
  CHECK(ParseTransType("workflow") == TransType::kWorkflow);
  CHECK_FALSE(ParseTransType("banana"));
  CHECK_FALSE(ParseBranchOp("banana"));
}

TEST_CASE("a gid is 1 to 128 characters of letters, digits and _.:-", "[common][protocol]") {
  CHECK(IsValidGid("g1"));
  CHECK(IsValidGid("order-42_a.b:c"));
  CHECK(IsValidGid(std::string(128, 'a')));
  CHECK_FALSE(IsValidGid(""));
  CHECK_FALSE(IsValidGid(std::string(129, 'a')));
  CHECK_FALSE(IsValidGid("has space"));
  CHECK_FALSE(IsValidGid("slash/"));
  CHECK_FALSE(IsValidGid("quote\""));
  CHECK_FALSE(IsValidGid("caf\xc3\xa9"));
}

TEST_CASE("branch ids count from 01 in registration order", "[common][protocol]") {
  CHECK(BranchIdForIndex(0) == "01");
  CHECK(BranchIdForIndex(8) == "09");
  CHECK(BranchIdForIndex(99) == "100");
}

}  // namespace
}  // namespace settle
