#pragma once

#include "dtmgimp.pb.h"
#include "settle/core/status.h"
#include "settle/sdk/coordinator_link.h"

namespace settle::sdk {

// An initiator's words as DTM's gRPC messages (docs/protocol.md §10.1), member for member as
// the HTTP Client's JSON carries them: durations in whole seconds, steps as a JSON string,
// each payload as its bytes. InvalidArgument naming the member for what DtmRequest cannot
// carry (a message's concurrent delivery).
Result<dtmgimp::DtmRequest> ToDtmRequest(const GlobalCall& call);

// The registration of a branch: its bytes as BusiPayload, its URLs in Data.
dtmgimp::DtmBranchRequest ToDtmBranchRequest(const BranchRegistration& branch);

}  // namespace settle::sdk
