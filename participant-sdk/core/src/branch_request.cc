#include "settle/sdk/branch_request.h"

#include <utility>

#include "query_params.h"
#include "settle/core/protocol_keys.h"

namespace settle::sdk {

using query::Param;

Status ParseBranchQuery(const std::multimap<std::string, std::string>& params,
                        BranchRequest& request) {
  std::string gid;
  if (Status s = query::ReadGid(params, gid); !s.ok()) return s;
  const std::string* type = Param(params, "trans_type");
  if (type == nullptr) return query::Required("trans_type");
  const auto trans_type = ParseTransType(*type);
  if (!trans_type)
    return Status::InvalidArgument("trans_type: expected tcc, saga, msg, xa or workflow");
  std::string branch_id;
  if (Status s = query::ReadBranchId(params, branch_id); !s.ok()) return s;
  // The Node SDK names the Try call's op branch_type.
  const std::string* op_name = Param(params, "op");
  if (op_name == nullptr) op_name = Param(params, "branch_type");
  if (op_name == nullptr) return query::Required("op");
  const auto op = ParseBranchOp(*op_name);
  if (!op) {
    return Status::InvalidArgument(
        "op: expected try, confirm, cancel, action, compensate, msg, commit or rollback");
  }
  request.gid = std::move(gid);
  request.trans_type = *trans_type;
  request.branch_id = std::move(branch_id);
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
