#pragma once

#include <string>

#include "settle/core/status.h"
#include "settle/sdk/outcome.h"

namespace settle::sdk {

// What the coordinator's answer to a submit (TCC, saga or message) says, as docs/protocol.md
// §6.4 tabulates it: SUCCESS is submitted (succeed with wait_result); with wait_result a
// FAILURE is the verdict of the coordinator's pass, failed with its message as the reason;
// ONGOING is submitted; anything else is returned as the error it is (without wait_result a
// FAILURE refuses the submit itself: the gid is taken by a finished transaction, say).
Result<Outcome> SubmitOutcome(const std::string& gid, bool wait_result,
                              const Result<std::string>& answer);

}  // namespace settle::sdk
