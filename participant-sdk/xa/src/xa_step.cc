#include "settle/sdk/xa_step.h"

#include <utility>

namespace settle::sdk {
namespace {

XaRequest XaCallOf(const BranchRequest& step, XaOp op) {
  XaRequest request;
  request.path = step.path;
  request.gid = step.gid;
  request.branch_id = step.branch_id;
  request.op = op;
  request.trace = step.trace;
  return request;
}

}  // namespace

WorkflowStep XaStep(PostgresXa& xa, std::string name, XaBusiness business) {
  WorkflowStep step;
  step.name = std::move(name);
  step.action = [&xa,
                 business = std::move(business)](const BranchRequest& call) -> Result<std::string> {
    if (Status s = xa.PrepareStep(XaCallOf(call, XaOp::kAction), business); !s.ok()) return s;
    return std::string();
  };
  step.on_commit = [&xa](const BranchRequest& call) {
    return xa.Phase2(XaCallOf(call, XaOp::kCommit)).status;
  };
  step.on_rollback = [&xa](const BranchRequest& call) {
    return xa.Phase2(XaCallOf(call, XaOp::kRollback)).status;
  };
  return step;
}

}  // namespace settle::sdk
