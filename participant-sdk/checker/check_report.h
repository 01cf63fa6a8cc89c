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

// What the closing lines name: the kind of run ("TCC", "saga", "entry point"), the ids it used
// so that the service's logs can be searched ("gids settle-check-1f2e3d4c-1 to ...-6"), and
// what --state would have shown ("whether a call was applied once, ..."; empty when --state
// was given).
struct SummaryLabels {
  std::string run;
  std::string ids;
  std::string unseen;
};
// The labels of a branch check's run.
SummaryLabels BranchSummaryLabels(TransType trans_type, bool state_given,
                                  const std::string& first_gid, const std::string& last_gid);

// The closing lines: counts, the ids used, and what --state would add when checks are
// unverified and labels.unseen says it. Ends with a newline.
std::string FormatSummary(const SummaryLabels& labels, const std::vector<CheckOutcome>& outcomes);

// kExitFailed if any check failed, otherwise kExitAllPassed.
int ExitCode(const std::vector<CheckOutcome>& outcomes);

}  // namespace settle::checker
