#include "settle/engine/workflow_engine.h"

#include <algorithm>
#include <optional>

#include "settle/core/base64.h"
#include "settle/core/grpc_target.h"
#include "settle/engine/new_records.h"
#include "settle/engine/request_rules.h"

namespace settle::engine {
namespace {

// The resume row's branch id, as DTM calls a workflow's query_prepared.
constexpr const char* kResumeBranch = "00";

// The ops a workflow's client records: a step's action, its phase 2 (commit after the workflow
// succeeded, rollback after it failed), and an XA step's local transaction (business).
constexpr BranchOp kStepOps[] = {BranchOp::kAction, BranchOp::kCommit, BranchOp::kRollback,
                                 BranchOp::kBusiness};

Status CheckWorkflowPrepare(const PrepareRequest& request) {
  if (Status s = CheckWorkflowName(request.options.workflow_name); !s.ok()) {
    return FieldError("custom_data.name", s.message());
  }
  if (request.query_prepared.empty()) {
    return FieldError("query_prepared", "required: the workflow's resume callback");
  }
  return CheckUrl("query_prepared", request.query_prepared, true);
}

std::optional<BranchOp> StepOp(std::string_view name) {
  const std::optional<BranchOp> op = ParseBranchOp(name);
  if (!op || std::find(std::begin(kStepOps), std::end(kStepOps), *op) == std::end(kStepOps)) {
    return std::nullopt;
  }
  return op;
}

std::optional<BranchStatus> StepStatus(std::string_view name) {
  const std::optional<BranchStatus> status = ParseBranchStatus(name);
  if (!status || *status == BranchStatus::kPrepared) return std::nullopt;
  return status;
}

Status CheckWorkflowStep(const RegisterBranchRequest& request) {
  if (request.op.empty()) return FieldError("op", "required for a workflow's step");
  if (!StepOp(request.op)) return FieldError("op", "must be action, commit, rollback or business");
  if (request.status.empty()) return FieldError("status", "required for a workflow's step");
  if (!StepStatus(request.status)) return FieldError("status", "must be succeed or failed");
  return Status::Ok();
}

std::string ExtraOf(const SubmitRequest& request, const std::string& key) {
  const auto found = request.req_extra.find(key);
  return found == request.req_extra.end() ? std::string() : found->second;
}

Status CheckWorkflowSubmit(const SubmitRequest& request) {
  const std::string status = ExtraOf(request, "status");
  if (status.empty()) {
    return FieldError("req_extra.status", "required: how the workflow ended (succeed or failed)");
  }
  if (status != ToString(GlobalStatus::kSucceed) && status != ToString(GlobalStatus::kFailed)) {
    return FieldError("req_extra.status", "must be succeed or failed");
  }
  if (ExtraOf(request, "rollback_reason").size() > kMaxWorkflowReasonLength) {
    return FieldError("req_extra.rollback_reason",
                      "at most " + std::to_string(kMaxWorkflowReasonLength) + " bytes");
  }
  if (!Base64Decode(ExtraOf(request, "result"))) {
    return FieldError("req_extra.result", "must be base64 (the workflow's result)");
  }
  return Status::Ok();
}

Result<std::vector<storage::BranchRecord>> ResumeRows(const PrepareRequest& request,
                                                      const storage::TransOptions& options,
                                                      const TopicSubscribers&, TimePoint now) {
  const std::string& input = request.options.workflow_input;
  std::string body =
      LooksLikeGrpcTarget(request.query_prepared) ? WorkflowDataMessage(input) : input;
  storage::BranchRecord row = NewBranchRow(request.gid, kResumeBranch, BranchOp::kResume, -1,
                                           request.query_prepared, std::move(body), now);
  // Its client runs it first: resumed only if it has not finished a retry interval later.
  row.next_retry_at = now + options.retry_interval;
  return std::vector<storage::BranchRecord>{std::move(row)};
}

std::vector<storage::BranchRecord> StepRows(const RegisterBranchRequest& request, TimePoint now) {
  storage::BranchRecord row =
      NewBranchRow(request.gid, request.branch_id, *StepOp(request.op), 0, "", request.data, now);
  row.status = *StepStatus(request.status);
  return {std::move(row)};
}

const storage::BranchRecord* ResumeRowOf(const storage::Transaction& tx) {
  const auto row =
      std::find_if(tx.branches.begin(), tx.branches.end(),
                   [](const storage::BranchRecord& b) { return b.op == BranchOp::kResume; });
  return row == tx.branches.end() ? nullptr : &*row;
}

Decision DecideWorkflow(const storage::Transaction& tx, TimePoint now) {
  Decision d;
  if (tx.global.status != GlobalStatus::kPrepared) return d;
  const storage::BranchRecord* resume = ResumeRowOf(tx);
  // A prepareWorkflow always stores one, and nothing but an operator settles it.
  if (resume == nullptr || resume->status != BranchStatus::kPrepared) return d;
  if (resume->next_retry_at <= now) {
    d.calls.push_back(static_cast<std::size_t>(resume - tx.branches.data()));
  } else {
    d.wake_at = resume->next_retry_at;
  }
  return d;
}

std::vector<bool> WorkflowRowsStillCalled(const storage::Transaction& tx) {
  return PreparedRowsOf(tx, tx.global.status == GlobalStatus::kPrepared
                                ? std::optional<BranchOp>(BranchOp::kResume)
                                : std::nullopt);
}

// A resume that answers FAILURE has had its workflow submit failed, or it is asked again: the
// workflow's submit says how it ended, not the resume's answer.
FailureMeaning WorkflowFailure(BranchOp op) {
  return op == BranchOp::kResume ? FailureMeaning::kRetried : FailureMeaning::kParticipantBug;
}

bool WorkflowSuccessIsFinal(BranchOp op) { return op != BranchOp::kResume; }

std::string WorkflowCallOp(const storage::Transaction& tx, const storage::BranchRecord& row) {
  if (row.op != BranchOp::kResume) return std::string(ToString(row.op));
  return tx.global.options.workflow_name;
}

}  // namespace

WorkflowEnd WorkflowEndOf(const SubmitRequest& request) {
  WorkflowEnd end;
  end.status = ExtraOf(request, "status") == ToString(GlobalStatus::kFailed)
                   ? GlobalStatus::kFailed
                   : GlobalStatus::kSucceed;
  end.rollback_reason = ExtraOf(request, "rollback_reason");
  end.result = Base64Decode(ExtraOf(request, "result")).value_or("");
  return end;
}

Status MatchEnded(const storage::GlobalRecord& stored, const WorkflowEnd& end) {
  const std::string gid = "gid " + stored.gid;
  if (stored.status == end.status && stored.result == end.result) return Status::Ok();
  if (stored.status == end.status) {
    return Status::Conflict(gid + " ended " + std::string(ToString(stored.status)) +
                            " with another result");
  }
  return Status::Conflict(gid + " is " + std::string(ToString(stored.status)) + ", not " +
                          std::string(ToString(end.status)) + ": a workflow ends once");
}

std::vector<const storage::BranchRecord*> StepLogOf(const storage::Transaction& tx) {
  std::vector<const storage::BranchRecord*> steps;
  for (const storage::BranchRecord& row : tx.branches) {
    if (row.op != BranchOp::kResume) steps.push_back(&row);
  }
  return steps;
}

Status MatchRecordedStep(const storage::Transaction& stored, const RegisterBranchRequest& request) {
  const std::optional<BranchOp> op = StepOp(request.op);
  const auto row = std::find_if(stored.branches.begin(), stored.branches.end(),
                                [&](const storage::BranchRecord& b) {
                                  return op && b.branch_id == request.branch_id && b.op == *op;
                                });
  const std::string step =
      "step " + request.branch_id + " (" + request.op + ") of gid " + request.gid;
  if (row == stored.branches.end()) return Status::Unavailable(step + " is not stored; try again");
  if (ToString(row->status) != request.status) {
    return Status::Conflict(step + " is recorded " + std::string(ToString(row->status)) +
                            ": a step is recorded once");
  }
  if (row->data.view() != request.data) {
    return Status::Conflict(step + " is recorded with other data: a step is recorded once");
  }
  return Status::Ok();
}

Status CheckStepInTime(const storage::GlobalRecord& global, const RegisterBranchRequest& request,
                       TimePoint now) {
  const Duration deadline = global.options.timeout_to_fail;
  if (deadline <= Duration(0) || now < global.create_time + deadline) return Status::Ok();
  if (StepOp(request.op) != BranchOp::kAction) return Status::Ok();
  return Status::Conflict("gid " + global.gid + " " + std::string(kWorkflowTimedOut) + " " +
                          std::to_string(deadline.count() / 1000) +
                          " s): it records no new action, and rolls back");
}

std::string WorkflowDataMessage(std::string_view input) {
  // proto3 leaves an empty bytes field out; otherwise field 1, wire type 2 (length-delimited):
  // the tag byte 0x0a, the length as a base-128 varint, the bytes.
  std::string message;
  if (input.empty()) return message;
  message.push_back('\x0a');
  std::size_t length = input.size();
  while (length >= 0x80) {
    message.push_back(static_cast<char>((length & 0x7f) | 0x80));
    length >>= 7;
  }
  message.push_back(static_cast<char>(length));
  message.append(input);
  return message;
}

const TypeRules& WorkflowRules() {
  static const TypeRules rules{
      .type = TransType::kWorkflow,
      .takes_prepare_workflow = true,
      .takes_register_branch = true,
      .carries_query_prepared = true,
      .branch_urls = BranchUrls::kStepOutcome,
      .custom_data = {.object_required = true, .workflow = true},
      .check_prepare = CheckWorkflowPrepare,
      .check_submit = CheckWorkflowSubmit,
      .check_register_branch = CheckWorkflowStep,
      .prepared_rows = ResumeRows,
      .registered_rows = StepRows,
      .submit = {.records_outcome = true},
      .prepare_repeat = {.only_custom_data = true},
      .decide = DecideWorkflow,
      .rows_still_called = WorkflowRowsStillCalled,
      .failure_of = WorkflowFailure,
      .success_is_final = WorkflowSuccessIsFinal,
      // A workflow has no deadline of its own: it runs until its client submits it.
      .default_deadline = false,
      .prepared_waits_for_deadline = false,
      // The resume is a POST even when the input is empty (DTM's becomes a GET then).
      .posts_always = true,
      .call_op = WorkflowCallOp,
      .article_name = "a workflow",
  };
  return rules;
}

}  // namespace settle::engine
