#include "settle/sdk/step_log.h"

#include <algorithm>

#include "settle/core/base64.h"

namespace settle::sdk {

std::string StepRecordData(std::string_view name, std::string_view bytes) {
  return std::string(name) + ":" + Base64Encode(bytes);
}

bool IsValidStepName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

Result<StepLog> StepLog::From(const std::vector<StepProgress>& progresses) {
  StepLog log;
  for (const StepProgress& p : progresses) {
    const std::string where = "step log: branch " + p.branch_id + " " + p.op + ": ";
    const std::optional<BranchOp> op = ParseBranchOp(p.op);
    if (!op) return Status::InvalidArgument(where + "not an op this SDK records");
    const std::optional<BranchStatus> status = ParseBranchStatus(p.status);
    if (!status || (*status != BranchStatus::kSucceed && *status != BranchStatus::kFailed)) {
      return Status::InvalidArgument(where + "status \"" + p.status + "\"");
    }
    const std::size_t colon = p.data.find(':');
    const std::string name = colon == std::string::npos ? std::string() : p.data.substr(0, colon);
    std::optional<std::string> bytes;
    if (IsValidStepName(name)) bytes = Base64Decode(std::string_view(p.data).substr(colon + 1));
    if (!bytes) {
      return Status::InvalidArgument(where + "not recorded by the C++ SDK (\"<step>:<base64>\")");
    }
    log.records_[{p.branch_id, *op}] = StepRecord{name, *status, std::move(*bytes)};
  }
  return log;
}

Result<std::optional<StepRecord>> StepLog::Find(const std::string& branch_id, BranchOp op,
                                                std::string_view name) const {
  const auto found = records_.find({branch_id, op});
  if (found == records_.end()) return std::optional<StepRecord>();
  if (found->second.name != name) {
    return Status::Internal("step " + branch_id + " (" + std::string(ToString(op)) +
                            ") is recorded as \"" + found->second.name +
                            "\", and the handler "
                            "now asks for \"" +
                            std::string(name) +
                            "\" there: its steps are not the ones it ran before (changed code?)");
  }
  return std::optional<StepRecord>(found->second);
}

}  // namespace settle::sdk
