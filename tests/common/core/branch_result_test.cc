#include "settle/core/branch_result.h"

#include <catch2/catch.hpp>

namespace settle {
namespace {

TEST_CASE("branch answers are classified in the protocol's order", "[common][protocol]") {
  CHECK(ClassifyBranchResponse(200, R"({"dtm_result":"SUCCESS"})") == BranchResult::kSuccess);
  CHECK(ClassifyBranchResponse(200, "") == BranchResult::kSuccess);
  CHECK(ClassifyBranchResponse(425, "") == BranchResult::kOngoing);
  CHECK(ClassifyBranchResponse(200, R"({"dtm_result":"ONGOING"})") == BranchResult::kOngoing);
  CHECK(ClassifyBranchResponse(409, "") == BranchResult::kFailure);
  CHECK(ClassifyBranchResponse(200, R"({"dtm_result":"FAILURE"})") == BranchResult::kFailure);
  CHECK(ClassifyBranchResponse(500, "oops") == BranchResult::kUnknown);
  CHECK(ClassifyBranchResponse(503, "") == BranchResult::kUnknown);
  CHECK(ClassifyBranchResponse(404, "not found") == BranchResult::kUnknown);
}

TEST_CASE("ONGOING wins over FAILURE, and FAILURE in any body wins over the status code",
          "[common][protocol]") {
  CHECK(ClassifyBranchResponse(409, "ONGOING") == BranchResult::kOngoing);
  CHECK(ClassifyBranchResponse(500, R"({"dtm_result":"FAILURE"})") == BranchResult::kFailure);
}

}  // namespace
}  // namespace settle
