#pragma once

#include <string_view>

namespace settle {

// What a participant's answer to a branch call means (docs/protocol.md §4.2, §4.3).
enum class BranchResult {
  kSuccess,  // HTTP 200
  kFailure,  // HTTP 409 or a body containing FAILURE: the business said no
  kOngoing,  // HTTP 425 or a body containing ONGOING: ask again later
  kUnknown,  // anything else, a connection error or a timeout: retry with backoff
};

std::string_view ToString(BranchResult r);

// Classifies an HTTP answer, in the protocol's order: ONGOING, then FAILURE, then any other
// non-200 is unknown, then 200 is SUCCESS. Transport errors are kUnknown without a call here.
BranchResult ClassifyBranchResponse(int http_status, std::string_view body);

}  // namespace settle
