#include "query_params.h"

#include "settle/core/protocol.h"

namespace settle::sdk::query {

const std::string* Param(const Params& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return nullptr;
  return &it->second;
}

Status Required(std::string_view name) {
  return Status::InvalidArgument(std::string(name) + ": required in the query string");
}

Status ReadGid(const Params& params, std::string& gid) {
  const std::string* value = Param(params, "gid");
  if (value == nullptr) return Required("gid");
  if (!IsValidGid(*value)) {
    return Status::InvalidArgument("gid: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  gid = *value;
  return Status::Ok();
}

Status ReadBranchId(const Params& params, std::string& branch_id) {
  const std::string* value = Param(params, "branch_id");
  if (value == nullptr) return Required("branch_id");
  if (!IsValidBranchId(*value)) {
    return Status::InvalidArgument("branch_id: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  branch_id = *value;
  return Status::Ok();
}

Status ExpectTransType(const Params& params, std::string_view expected, std::string_view what) {
  const std::string* type = Param(params, "trans_type");
  if (type == nullptr) return Required("trans_type");
  if (*type != expected) {
    return Status::InvalidArgument("trans_type: this URL " + std::string(what));
  }
  return Status::Ok();
}

}  // namespace settle::sdk::query
