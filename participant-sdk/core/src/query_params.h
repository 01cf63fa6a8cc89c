#pragma once

#include <map>
#include <string>
#include <string_view>

#include "settle/core/status.h"

// The reading of a branch URL's query that the branch, XA and resume parsers share.
namespace settle::sdk::query {

using Params = std::multimap<std::string, std::string>;

// The parameter's first value; nullptr when it is absent or empty.
const std::string* Param(const Params& params, const std::string& name);

// InvalidArgument "<name>: required in the query string".
Status Required(std::string_view name);

// The gid and the branch id, required and valid (InvalidArgument naming the parameter).
Status ReadGid(const Params& params, std::string& gid);
Status ReadBranchId(const Params& params, std::string& branch_id);

// trans_type, required and exactly `expected` ("trans_type: this URL <what>" otherwise).
Status ExpectTransType(const Params& params, std::string_view expected, std::string_view what);

}  // namespace settle::sdk::query
