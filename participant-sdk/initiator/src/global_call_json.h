#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// Adds every option that is set to a prepare or submit body, as DTM's SDKs name them
// (docs/protocol.md §3.7): wait_result when true, durations in whole seconds, retry_limit when
// positive, branch_headers when there are any. Unset options are left out, so that the
// coordinator's defaults apply.
void AddTransOptions(const TransOptions& options, nlohmann::json& body);

// The JSON body of §3 for a prepare, submit or abort: gid and trans_type, the options that are
// set, and each member of the call that is not empty (steps with their payloads,
// custom_data, concurrent, query_prepared, rollback_reason). Invalid UTF-8 is replaced.
std::string GlobalCallJson(const GlobalCall& call);

// registerBranch's body (§3.4): gid, trans_type, branch_id, the bytes as "data" and each URL
// under its name.
std::string RegistrationJson(const BranchRegistration& branch);

}  // namespace settle::sdk
