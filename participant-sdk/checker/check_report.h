#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "settle/core/protocol.h"

namespace settle::checker {

enum class Verdict {
  kPass,
  kFail,
  kUnverified,  // the answers were right; the effect on the state needs --state to be seen
};

// "PASS", "FAIL", "UNVERIFIED".
std::string_view ToString(Verdict verdict);

// The verdict on one check and what was seen.
struct CheckOutcome {
  Verdict verdict = Verdict::kFail;
  std::string name;    // "empty rollback"
  std::string detail;  // "cancel without try answered SUCCESS and changed nothing"
};

// "PASS  empty rollback: cancel without try answered SUCCESS and changed nothing"
std::string FormatOutcome(const CheckOutcome& outcome);

// The closing lines: counts, the gids used (so that the participant's logs can be searched),
// and what --state would add when checks are unverified. Ends with a newline.
std::string FormatSummary(TransType trans_type, const std::vector<CheckOutcome>& outcomes,
                          const std::string& first_gid, const std::string& last_gid);

// kExitFailed if any check failed, otherwise kExitAllPassed.
int ExitCode(const std::vector<CheckOutcome>& outcomes);

}  // namespace settle::checker
