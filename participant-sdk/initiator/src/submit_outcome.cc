#include "submit_outcome.h"

namespace settle::sdk {

Result<Outcome> SubmitOutcome(const std::string& gid, bool wait_result,
                              const Result<std::string>& answer) {
  if (answer) {
    return Outcome{gid, wait_result ? GlobalStatus::kSucceed : GlobalStatus::kSubmitted, ""};
  }
  const Status& s = answer.status();
  // DTM's SDKs read a wait_result FAILURE the same way: the transaction ended failed (a saga
  // step failed and was compensated, a TCC was aborted by timeout_to_fail before the submit).
  if (s.code() == StatusCode::kConflict && wait_result) {
    return Outcome{gid, GlobalStatus::kFailed, s.message()};
  }
  if (s.code() == StatusCode::kPending) return Outcome{gid, GlobalStatus::kSubmitted, s.message()};
  return s;
}

}  // namespace settle::sdk
