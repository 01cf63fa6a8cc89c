#include "settle/sdk/branch_request.h"

#include "settle/core/protocol_keys.h"

namespace settle::sdk {
namespace {

const std::string* Param(const std::multimap<std::string, std::string>& params,
                         const std::string& name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return nullptr;
  return &it->second;
}

}  // namespace

Status ParseBranchQuery(const std::multimap<std::string, std::string>& params,
                        BranchRequest& request) {
  const std::string* gid = Param(params, "gid");
  if (gid == nullptr) return Status::InvalidArgument("gid: required in the query string");
  if (!IsValidGid(*gid)) {
    return Status::InvalidArgument("gid: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  const std::string* type = Param(params, "trans_type");
  if (type == nullptr) return Status::InvalidArgument("trans_type: required in the query string");
  const auto trans_type = ParseTransType(*type);
  if (!trans_type)
    return Status::InvalidArgument("trans_type: expected tcc, saga, msg, xa or workflow");
  const std::string* branch_id = Param(params, "branch_id");
  if (branch_id == nullptr)
    return Status::InvalidArgument("branch_id: required in the query string");
  if (!IsValidBranchId(*branch_id)) {
    return Status::InvalidArgument("branch_id: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  // The Node SDK names the Try call's op branch_type.
  const std::string* op_name = Param(params, "op");
  if (op_name == nullptr) op_name = Param(params, "branch_type");
  if (op_name == nullptr) return Status::InvalidArgument("op: required in the query string");
  const auto op = ParseBranchOp(*op_name);
  if (!op) {
    return Status::InvalidArgument(
        "op: expected try, confirm, cancel, action, compensate, msg, commit or rollback");
  }
  request.gid = *gid;
  request.trans_type = *trans_type;
  request.branch_id = *branch_id;
  request.op = *op;
  return Status::Ok();
}

Status CheckProtocolKeysOnce(const std::multimap<std::string, std::string>& params) {
  const auto key = RepeatedProtocolKey(params);
  if (!key) return Status::Ok();
  return Status::InvalidArgument(std::string(*key) +
                                 ": more than once in the query string; the coordinator sets "
                                 "it, and a branch URL's own query may not name it");
}

Status CheckDtmMetadataOnce(const std::vector<std::string_view>& keys) {
  const auto key = RepeatedDtmMetadataKey(keys);
  if (!key) return Status::Ok();
  return Status::InvalidArgument(*key +
                                 ": more than once in the call's metadata; the coordinator sets "
                                 "it, and a transaction's branch_headers may not name it");
}

}  // namespace settle::sdk
