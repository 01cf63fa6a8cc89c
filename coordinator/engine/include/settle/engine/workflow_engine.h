#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"
#include "settle/engine/requests.h"
#include "settle/engine/type_rules.h"
#include "settle/storage/records.h"

// A workflow (docs/protocol.md §3.16), DTM's fourth contract: its client runs the workflow's
// code and reports to settled; settled keeps what it reports and resumes it when it stops.
//
// - prepareWorkflow stores the transaction prepared, with custom_data {"name","data"} (the
//   workflow's name and its input) and its query_prepared callback, as one resume row (branch
//   "00", op resume); repeated, it answers what is stored: the transaction and its step log.
// - registerBranch records one step's outcome, (branch_id, op) -> (status, data): a row that is
//   finished when it is stored and that settled never calls. A repeat with the same content
//   answers as the first did; with other content, 409. Each report also puts the next resume a
//   retry interval off: its client is running it.
// - submit records how the workflow ended (req_extra's status, rollback_reason and result):
//   the prepared transaction finishes, and nothing is driven.
// - While it is prepared, settled resumes it: the resume row is called (POST query_prepared
//   with op=<name> and the input as the body; gRPC: WorkflowData{data} to the method, dtm-op
//   the name) with the backoff of any call, the first time retry_interval after the prepare.
//   Whatever it answers, the workflow's own submit is what finishes it: a SUCCESS, a FAILURE or
//   an ONGOING leaves a workflow that is still prepared to be resumed again.
namespace settle::engine {

// The workflow's descriptor (type_rules.h).
const TypeRules& WorkflowRules();

// The rollback_reason a workflow's submit may carry (its error's text): at most this many bytes.
inline constexpr std::size_t kMaxWorkflowReasonLength = 65536;

// How a workflow ended, from its submit's req_extra (checked by the submit's check).
struct WorkflowEnd {
  GlobalStatus status = GlobalStatus::kSucceed;
  std::string rollback_reason;
  std::string result;  // decoded from base64
};
WorkflowEnd WorkflowEndOf(const SubmitRequest& request);

// A submit for a workflow that is no longer prepared: OK when it finished as `end` says (the
// same status and result: a repeat whose first answer was lost), Conflict otherwise.
Status MatchEnded(const storage::GlobalRecord& stored, const WorkflowEnd& end);

// Its step log: every row but the resume row, in the store's order.
std::vector<const storage::BranchRecord*> StepLogOf(const storage::Transaction& tx);

// A registration against the stored workflow: OK when the step is recorded as `request`
// reports it (the same status and data: a repeat), Conflict naming what differs when another
// report was recorded first, Unavailable when it is not recorded yet.
Status MatchRecordedStep(const storage::Transaction& stored, const RegisterBranchRequest& request);

// Whether the workflow may still record the step `request` reports at `now`: a workflow past
// its timeout_to_fail (create_time + timeout_to_fail, when it has one) records no new action,
// Conflict "timed out": its run takes that as the step's failure and rolls back, recording its
// rollbacks and its failed submit, which are still taken.
Status CheckStepInTime(const storage::GlobalRecord& global, const RegisterBranchRequest& request,
                       TimePoint now);

// The body of a gRPC resume: the protobuf message WorkflowData{bytes data = 1}.
std::string WorkflowDataMessage(std::string_view input);

}  // namespace settle::engine
