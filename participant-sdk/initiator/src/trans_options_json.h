#pragma once

#include <nlohmann/json.hpp>

#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// Adds every option that is set to a prepare or submit body, as DTM's SDKs name them
// (docs/protocol.md §3.7): wait_result when true, durations in whole seconds, retry_limit when
// positive, branch_headers when there are any. Unset options are left out, so that the
// coordinator's defaults apply.
void AddTransOptions(const TransOptions& options, nlohmann::json& body);

}  // namespace settle::sdk
