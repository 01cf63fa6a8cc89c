#include "settle/sdk/xa_request.h"

#include <array>
#include <utility>

#include "settle/core/protocol.h"
#include "settle/core/url.h"

namespace settle::sdk {
namespace {

constexpr std::array<std::pair<XaOp, std::string_view>, 3> kXaOps{{
    {XaOp::kAction, "action"},
    {XaOp::kCommit, "commit"},
    {XaOp::kRollback, "rollback"},
}};

const std::string* Param(const std::multimap<std::string, std::string>& params,
                         const std::string& name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return nullptr;
  return &it->second;
}

Status Required(std::string_view name) {
  return Status::InvalidArgument(std::string(name) + ": required in the query string");
}

}  // namespace

std::string_view ToString(XaOp op) {
  for (const auto& [value, name] : kXaOps) {
    if (value == op) return name;
  }
  return "?";
}

std::optional<XaOp> ParseXaOp(std::string_view s) {
  for (const auto& [value, name] : kXaOps) {
    if (name == s) return value;
  }
  return std::nullopt;
}

Status ParseXaQuery(const std::multimap<std::string, std::string>& params, XaRequest& request) {
  const std::string* gid = Param(params, "gid");
  if (gid == nullptr) return Required("gid");
  if (!IsValidGid(*gid)) {
    return Status::InvalidArgument("gid: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  const std::string* type = Param(params, "trans_type");
  if (type == nullptr) return Required("trans_type");
  if (*type != "xa") return Status::InvalidArgument("trans_type: this URL takes xa");
  const std::string* branch_id = Param(params, "branch_id");
  if (branch_id == nullptr) return Required("branch_id");
  if (!IsValidBranchId(*branch_id)) {
    return Status::InvalidArgument("branch_id: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  const std::string* op_name = Param(params, "op");
  if (op_name == nullptr) return Required("op");
  const auto op = ParseXaOp(*op_name);
  if (!op) return Status::InvalidArgument("op: expected action, commit or rollback");
  std::string phase2_url;
  if (*op == XaOp::kAction) {
    const std::string* url = Param(params, "phase2_url");
    if (url == nullptr) return Required("phase2_url");
    if (auto parsed = ParseUrl(*url); !parsed) {
      return Status::InvalidArgument("phase2_url: " + parsed.status().message());
    }
    phase2_url = *url;
  }
  request.gid = *gid;
  request.branch_id = *branch_id;
  request.op = *op;
  request.phase2_url = std::move(phase2_url);
  return Status::Ok();
}

}  // namespace settle::sdk
