#include "settle/sdk/xa_request.h"

#include <array>
#include <utility>

#include "query_params.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"

namespace settle::sdk {
namespace {

constexpr std::array<std::pair<XaOp, std::string_view>, 3> kXaOps{{
    {XaOp::kAction, "action"},
    {XaOp::kCommit, "commit"},
    {XaOp::kRollback, "rollback"},
}};

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
  std::string gid;
  if (Status s = query::ReadGid(params, gid); !s.ok()) return s;
  if (Status s = query::ExpectTransType(params, "xa", "takes xa"); !s.ok()) return s;
  std::string branch_id;
  if (Status s = query::ReadBranchId(params, branch_id); !s.ok()) return s;
  const std::string* op_name = query::Param(params, "op");
  if (op_name == nullptr) return query::Required("op");
  const auto op = ParseXaOp(*op_name);
  if (!op) return Status::InvalidArgument("op: expected action, commit or rollback");
  std::string phase2_url;
  if (*op == XaOp::kAction) {
    const std::string* url = query::Param(params, "phase2_url");
    if (url == nullptr) return query::Required("phase2_url");
    if (auto parsed = ParseUrl(*url); !parsed) {
      return Status::InvalidArgument("phase2_url: " + parsed.status().message());
    }
    phase2_url = *url;
  }
  request.gid = std::move(gid);
  request.branch_id = std::move(branch_id);
  request.op = *op;
  request.phase2_url = std::move(phase2_url);
  return Status::Ok();
}

}  // namespace settle::sdk
