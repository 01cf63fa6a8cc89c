#include "check_report.h"

#include <algorithm>

#include "exit_codes.h"

namespace settle::checker {

std::string_view ToString(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kUnverified:
      return "UNVERIFIED";
  }
  return "?";
}

std::string FormatOutcome(const CheckOutcome& outcome) {
  return std::string(ToString(outcome.verdict)) + "  " + outcome.name + ": " + outcome.detail;
}

SummaryLabels BranchSummaryLabels(TransType trans_type, bool state_given,
                                  const std::string& first_gid, const std::string& last_gid) {
  return {trans_type == TransType::kTcc ? "TCC" : "saga", "gids " + first_gid + " to " + last_gid,
          state_given
              ? ""
              : "whether a call was applied once, changed nothing or released what it reserved"};
}

std::string FormatSummary(const SummaryLabels& labels, const std::vector<CheckOutcome>& outcomes) {
  auto count = [&outcomes](Verdict v) {
    return std::to_string(std::count_if(outcomes.begin(), outcomes.end(),
                                        [v](const CheckOutcome& o) { return o.verdict == v; }));
  };
  std::string summary = labels.run + ": " + std::to_string(outcomes.size()) + " checks, " +
                        count(Verdict::kPass) + " passed, " + count(Verdict::kFail) + " failed, " +
                        count(Verdict::kUnverified) + " unverified (" + labels.ids + ")\n";
  if (count(Verdict::kUnverified) != "0" && !labels.unseen.empty()) {
    summary += "Only the answers were checked: without --state URL, settle-check cannot see " +
               labels.unseen + ".\n";
  }
  return summary;
}

int ExitCode(const std::vector<CheckOutcome>& outcomes) {
  const bool failed = std::any_of(outcomes.begin(), outcomes.end(), [](const CheckOutcome& o) {
    return o.verdict == Verdict::kFail;
  });
  return failed ? kExitFailed : kExitAllPassed;
}

}  // namespace settle::checker
