#include "settle/core/branch_result.h"

namespace settle {

std::string_view ToString(BranchResult r) {
  switch (r) {
    case BranchResult::kSuccess:
      return "SUCCESS";
    case BranchResult::kFailure:
      return "FAILURE";
    case BranchResult::kOngoing:
      return "ONGOING";
    case BranchResult::kUnknown:
      return "UNKNOWN";
  }
  return "?";
}

BranchResult ClassifyBranchResponse(int http_status, std::string_view body) {
  if (http_status == 425 || body.find("ONGOING") != std::string_view::npos) {
    return BranchResult::kOngoing;
  }
  if (http_status == 409 || body.find("FAILURE") != std::string_view::npos) {
    return BranchResult::kFailure;
  }
  if (http_status != 200) return BranchResult::kUnknown;
  return BranchResult::kSuccess;
}

}  // namespace settle
