#include "settle/core/branch_result.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle {
namespace {

// The rule of docs/protocol.md §4.2, one row per case the document states. The coordinator
// (participants' answers), the SDK's client (Try calls and the coordinator's verdicts, §6.4)
// and settle-check all classify with this one function.
struct Row {
  int status;
  std::string body;
  BranchResult expected;
  const char* source;  // where docs/protocol.md says so
};

const Row kRows[] = {
    // 4. HTTP 200: SUCCESS, whatever else the body says.
    {200, R"({"dtm_result":"SUCCESS"})", BranchResult::kSuccess, "§4.2 step 4, §6.2 Success()"},
    {200, "", BranchResult::kSuccess, "§4.2 step 4"},
    {200, R"({"reserved":30})", BranchResult::kSuccess, "§4.2 step 4, §6.2 Success(body)"},
    // 1. HTTP 425, or ONGOING anywhere in the body: ONGOING.
    {425, "", BranchResult::kOngoing, "§4.2 step 1"},
    {425, R"({"dtm_result":"ONGOING","message":"busy"})", BranchResult::kOngoing,
     "§4.2 step 1, §6.2 Ongoing()"},
    {200, R"({"dtm_result":"ONGOING"})", BranchResult::kOngoing, "§4.2 step 1"},
    {200, R"({"note":"state ONGOING"})", BranchResult::kOngoing,
     "§4.2: ONGOING anywhere, in a business field too"},
    {503, "ONGOING", BranchResult::kOngoing, "§4.2: whatever the status"},
    // 2. HTTP 409, or FAILURE anywhere in the body: FAILURE.
    {409, "", BranchResult::kFailure, "§4.2 step 2"},
    {409, R"({"dtm_result":"FAILURE","message":"insufficient funds"})", BranchResult::kFailure,
     "§4.2 step 2, §6.2 Failure()"},
    {200, R"({"dtm_result":"FAILURE"})", BranchResult::kFailure, "§4.2 step 2"},
    {500, R"({"dtm_result":"FAILURE"})", BranchResult::kFailure,
     "§4.2: a 500 whose body says FAILURE is a FAILURE"},
    {200, R"({"last_error":"FAILURE: HTTP 409"})", BranchResult::kFailure,
     "§4.2: FAILURE anywhere in the body"},
    // The order: ONGOING is looked for before FAILURE.
    {409, R"({"message":"ONGOING"})", BranchResult::kOngoing, "§4.2: ONGOING before FAILURE"},
    {425, R"({"dtm_result":"FAILURE"})", BranchResult::kOngoing, "§4.2: ONGOING before FAILURE"},
    {200, "FAILURE ONGOING", BranchResult::kOngoing, "§4.2: ONGOING before FAILURE"},
    // The words are matched case-sensitively.
    {200, R"({"dtm_result":"failure"})", BranchResult::kSuccess, "§4.2: case-sensitive"},
    {200, R"({"dtm_result":"Ongoing"})", BranchResult::kSuccess, "§4.2: case-sensitive"},
    {500, "failure", BranchResult::kUnknown, "§4.2: case-sensitive"},
    // 3. Any other status than 200: UNKNOWN, retried.
    {201, "", BranchResult::kUnknown, "§4.2: only exactly 200 is a success"},
    {204, "", BranchResult::kUnknown, "§4.2: only exactly 200 is a success"},
    {302, "", BranchResult::kUnknown, "§4.2: redirects are not followed"},
    {400, R"({"message":"amount: bad"})", BranchResult::kUnknown, "§4.2 step 3, §6.2"},
    {404, "not found", BranchResult::kUnknown, "§4.2 step 3"},
    {500, R"({"message":"handler threw: boom"})", BranchResult::kUnknown, "§4.2 step 3, §6.2"},
    {503, R"({"message":"db down"})", BranchResult::kUnknown, "§4.2 step 3, §6.2"},
};

TEST_CASE("branch answers are classified as docs/protocol.md §4.2 says", "[common][protocol]") {
  for (const Row& row : kRows) {
    CAPTURE(row.status, row.body, row.source);
    CHECK(ClassifyBranchResponse(row.status, row.body) == row.expected);
  }
}

TEST_CASE("branch results are named as the protocol names them", "[common][protocol]") {
  CHECK(ToString(BranchResult::kSuccess) == "SUCCESS");
  CHECK(ToString(BranchResult::kFailure) == "FAILURE");
  CHECK(ToString(BranchResult::kOngoing) == "ONGOING");
  CHECK(ToString(BranchResult::kUnknown) == "UNKNOWN");
}

}  // namespace
}  // namespace settle
