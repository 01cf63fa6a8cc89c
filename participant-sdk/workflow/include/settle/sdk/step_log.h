#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/protocol.h"
#include "settle/core/status.h"
#include "settle/sdk/coordinator_link.h"

namespace settle::sdk {

// What the C++ SDK records of a step in a workflow's log (registerBranch's data, §3.16): the
// step's name and its bytes (its output, or the reason it failed), as "<name>:<base64 of the
// bytes>". The name lets a resumed handler be told, rather than silently handed another step's
// result, when its code asks for steps in another order than the log records.
std::string StepRecordData(std::string_view name, std::string_view bytes);

// A step's record as the log holds it.
struct StepRecord {
  std::string name;
  BranchStatus status = BranchStatus::kSucceed;  // succeed or failed
  std::string bytes;
};

// The names a step may have: 1 to 64 characters of [A-Za-z0-9_.-].
bool IsValidStepName(std::string_view name);

// A workflow's step log, as prepareWorkflow answered it: pure, no I/O. A run asks it, step by
// step, whether the step at a branch id and op is recorded.
class StepLog {
 public:
  // InvalidArgument when a record cannot be read: not written by this SDK (another client's
  // workflow of the same gid), or an op or status the protocol does not record.
  static Result<StepLog> From(const std::vector<StepProgress>& progresses);

  // The record of `branch_id`'s `op`, if there is one. Internal when it was recorded for a step
  // of another name: the handler asks for its steps in another order than when it ran (its
  // code changed), and replaying would hand it the wrong step's result. Not a Conflict, which
  // would fail the workflow as if its business had said no: the run stops, and the workflow
  // waits (stuck) for its code to be put right or for an operator.
  Result<std::optional<StepRecord>> Find(const std::string& branch_id, BranchOp op,
                                         std::string_view name) const;

  std::size_t size() const { return records_.size(); }

 private:
  std::map<std::pair<std::string, BranchOp>, StepRecord> records_;
};

}  // namespace settle::sdk
