#include "settle/sdk/workflow.h"

#include <exception>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "settle/core/base64.h"
#include "settle/core/protocol.h"
#include "settle/sdk/caught.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kWorkflow = "workflow";

// A step's business refusal: what the protocol reads as FAILURE.
bool IsBusinessFailure(const Status& s) {
  return s.code() == StatusCode::kConflict || s.code() == StatusCode::kNotFound ||
         s.code() == StatusCode::kAlreadyExists;
}

// A branch's answer as a step's outcome.
Status StatusOfAnswer(const BranchAnswer& answer) {
  switch (answer.result) {
    case BranchResult::kSuccess:
      return Status::Ok();
    case BranchResult::kFailure:
      return Status::Conflict(answer.description);
    case BranchResult::kOngoing:
      return Status::Pending(answer.description);
    case BranchResult::kUnknown:
      break;
  }
  return Status::Unavailable(answer.description);
}

// A call of `url` for `step`, as `op` (the step's own op, or TCC's try, confirm and cancel):
// the answer's body, or the answer as a step's outcome.
Result<std::string> CallAs(CoordinatorLink& link, const TransOptions& options,
                           const std::string& url, const std::string& body,
                           const BranchRequest& step, BranchOp op) {
  OwnBranchCall call;
  call.url = url;
  call.gid = step.gid;
  call.trans_type = std::string(kWorkflow);
  call.branch_id = step.branch_id;
  call.op = std::string(ToString(op));
  call.body = body;
  call.timeout =
      options.request_timeout
          ? std::chrono::duration_cast<std::chrono::milliseconds>(*options.request_timeout)
          : link.timeout();
  call.headers = options.branch_headers;
  Result<BranchAnswer> answer = link.CallBranch(call);
  if (!answer) return answer.status();
  if (Status s = StatusOfAnswer(*answer); !s.ok()) return s;
  return std::move(answer->body);
}

// An action calling `url` as `op`.
StepAction UrlAction(CoordinatorLink& link, const TransOptions& options, std::string url,
                     std::string body, BranchOp op) {
  return [&link, &options, url = std::move(url), body = std::move(body),
          op](const BranchRequest& call) { return CallAs(link, options, url, body, call, op); };
}

// A phase 2 calling `url` as `op` (none: the step's own op, commit or rollback).
StepPhase2 UrlPhase2(CoordinatorLink& link, const TransOptions& options, std::string url,
                     std::string body, std::optional<BranchOp> op) {
  return [&link, &options, url = std::move(url), body = std::move(body),
          op](const BranchRequest& call) {
    Result<std::string> done = CallAs(link, options, url, body, call, op.value_or(call.op));
    return done ? Status::Ok() : done.status();
  };
}

}  // namespace

BranchRequest Workflow::CallOf(const std::string& branch_id, BranchOp op) const {
  BranchRequest call;
  call.gid = gid_;
  call.trans_type = TransType::kWorkflow;
  call.branch_id = branch_id;
  call.op = op;
  return call;
}

Status Workflow::Record(const std::string& branch_id, BranchOp op, BranchStatus status,
                        const std::string& data) {
  BranchRegistration record;
  record.gid = gid_;
  record.trans_type = std::string(kWorkflow);
  record.branch_id = branch_id;
  record.data = data;
  record.op = std::string(ToString(op));
  record.status = std::string(ToString(status));
  record.traceparent = options_.traceparent;
  record.tracestate = options_.tracestate;
  Result<RegisteredBranch> stored = link_.RegisterBranch(record);
  if (stored) return Status::Ok();
  if (stored.status().code() == StatusCode::kConflict &&
      stored.status().message().find(kWorkflowTimedOut) != std::string::npos) {
    // The coordinator takes no new action past the workflow's timeout_to_fail (its rollbacks
    // and its submit still): the business's refusal, as far as this run is concerned.
    return Status::Conflict("recording step " + branch_id + " of workflow " + gid_ + ": " +
                            stored.status().message());
  }
  // Anything else the coordinator said (another run recorded this step otherwise, the workflow
  // ended meanwhile, it was unreachable): this run cannot go on from what it knows, and the
  // next one replays the log as it is. Never a Conflict, which the handler would read as the
  // business saying no.
  return Status::Unavailable("recording step " + branch_id + " (" + std::string(ToString(op)) +
                             ") of workflow " + gid_ + ": " + stored.status().message());
}

asio::awaitable<Result<std::string>> Workflow::Do(const WorkflowStep& step) {
  if (!IsValidStepName(step.name)) {
    co_return Status::InvalidArgument("step name \"" + step.name +
                                      "\": 1 to 64 characters of [A-Za-z0-9_.-]");
  }
  if (!step.action) co_return Status::InvalidArgument("step " + step.name + ": no action");
  const std::string branch_id = BranchIdForIndex(steps_++);
  Result<std::optional<StepRecord>> recorded = log_.Find(branch_id, BranchOp::kAction, step.name);
  if (!recorded) co_return recorded.status();
  std::optional<StepRecord> record = std::move(*recorded);
  if (!record) {
    const BranchRequest call = CallOf(branch_id, BranchOp::kAction);
    Result<std::string> done = Caught("step " + step.name, [&] { return step.action(call); });
    if (!done.ok() && !IsBusinessFailure(done.status())) co_return done.status();
    const BranchStatus status = done.ok() ? BranchStatus::kSucceed : BranchStatus::kFailed;
    const std::string bytes = done.ok() ? *done : done.status().message();
    if (Status s = Record(branch_id, BranchOp::kAction, status, StepRecordData(step.name, bytes));
        !s.ok()) {
      if (s.code() != StatusCode::kConflict) co_return s;
      // Past the workflow's timeout_to_fail: the step ran but is not recorded, and the
      // workflow must end. It fails here, the step rolled back with the others.
      if (step.on_rollback) rollbacks_.push_back({branch_id, step.name, step.on_rollback});
      co_return s;
    }
    record = StepRecord{step.name, status, bytes};
  }
  // Rolled back even when it failed, as a saga compensates its failed action: a refusal may
  // follow part of the work (a Barrier makes the rollback of one that did nothing empty).
  if (step.on_rollback) rollbacks_.push_back({branch_id, step.name, step.on_rollback});
  if (record->status == BranchStatus::kFailed) co_return Status::Conflict(record->bytes);
  if (step.on_commit) commits_.push_back({branch_id, step.name, step.on_commit});
  co_return std::move(record->bytes);
}

Status Workflow::RunPhase2(const std::vector<Phase2>& items, BranchOp op) {
  for (auto item = items.rbegin(); item != items.rend(); ++item) {
    Result<std::optional<StepRecord>> recorded = log_.Find(item->branch_id, op, item->step);
    if (!recorded) return recorded.status();
    if (recorded->has_value()) continue;
    const BranchRequest call = CallOf(item->branch_id, op);
    const Status done = Caught("phase 2 of step " + item->step, [&] { return item->call(call); });
    if (!done.ok()) {
      // Retried by the next run, whatever it said: a phase 2 may not fail.
      return Status(IsBusinessFailure(done) ? StatusCode::kUnavailable : done.code(),
                    std::string(ToString(op)) + " of step " + item->branch_id + " (" + item->step +
                        "): " + done.message());
    }
    if (Status s =
            Record(item->branch_id, op, BranchStatus::kSucceed, StepRecordData(item->step, ""));
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

WorkflowStep Workflow::CallStep(std::string name, std::string url, std::string body) const {
  WorkflowStep step;
  step.name = std::move(name);
  step.action = UrlAction(link_, options_, std::move(url), std::move(body), BranchOp::kAction);
  return step;
}

StepPhase2 Workflow::CallPhase2(std::string url, std::string body) const {
  return UrlPhase2(link_, options_, std::move(url), std::move(body), std::nullopt);
}

WorkflowStep Workflow::SagaStep(std::string name, const SagaUrls& urls,
                                const std::string& body) const {
  WorkflowStep step;
  step.name = std::move(name);
  step.action = UrlAction(link_, options_, urls.action_url, body, BranchOp::kAction);
  step.on_rollback = UrlPhase2(link_, options_, urls.compensate_url, body, BranchOp::kCompensate);
  return step;
}

WorkflowStep Workflow::TccStep(std::string name, const TccUrls& urls,
                               const std::string& body) const {
  WorkflowStep step;
  step.name = std::move(name);
  step.action = UrlAction(link_, options_, urls.try_url, body, BranchOp::kTry);
  step.on_commit = UrlPhase2(link_, options_, urls.confirm_url, body, BranchOp::kConfirm);
  step.on_rollback = UrlPhase2(link_, options_, urls.cancel_url, body, BranchOp::kCancel);
  return step;
}

Workflows::Workflows(CoordinatorLink& link, WorkflowsOptions options)
    : link_(link), options_(std::move(options)) {}

Status Workflows::Register(const std::string& name, WorkflowHandler handler) {
  // As settled checks it: a name it would refuse at prepareWorkflow is refused here.
  if (Status s = CheckWorkflowName(name); !s.ok()) {
    return Status::InvalidArgument("workflow name: " + s.message());
  }
  if (!handler) return Status::InvalidArgument("workflow " + name + ": no handler");
  std::lock_guard lock(mutex_);
  if (!handlers_.emplace(name, std::move(handler)).second) {
    return Status::InvalidArgument("workflow " + name + ": registered already");
  }
  return Status::Ok();
}

Result<std::string> Workflows::Execute(const std::string& name, const std::string& gid,
                                       const std::string& input) {
  WorkflowHandler handler;
  {
    std::lock_guard lock(mutex_);
    const auto found = handlers_.find(name);
    if (found == handlers_.end()) {
      return Status::InvalidArgument("no workflow named \"" + name + "\" is registered here");
    }
    if (!running_.insert(gid).second) {
      return Status::Pending("workflow " + gid + " is running in this process");
    }
    handler = found->second;
  }
  Result<std::string> out = Run(name, handler, gid, input);
  std::lock_guard lock(mutex_);
  running_.erase(gid);
  return out;
}

namespace {

// The handler as a coroutine of its own, its result stored where Run reads it.
asio::awaitable<void> RunHandler(const WorkflowHandler& handler, Workflow& wf, std::string input,
                                 std::optional<Result<std::string>>& out) {
  Result<std::string> result = co_await handler(wf, std::move(input));
  out = std::move(result);
}

}  // namespace

Result<std::string> Workflows::Run(const std::string& name, const WorkflowHandler& handler,
                                   const std::string& gid, const std::string& input) {
  GlobalCall prepare;
  prepare.gid = gid;
  prepare.trans_type = std::string(kWorkflow);
  prepare.options = options_.options;
  prepare.options.wait_result = false;
  prepare.custom_data = nlohmann::json{{"name", name}, {"data", Base64Encode(input)}}.dump();
  prepare.query_prepared = options_.resume_url;
  Result<WorkflowState> state = link_.PrepareWorkflow(prepare);
  if (!state && state.status().code() == StatusCode::kConflict) {
    // The gid holds another transaction, or this workflow with other input: the caller's
    // mistake, not a workflow that failed.
    return Status::InvalidArgument("gid " + gid + ": " + state.status().message());
  }
  if (!state) return state.status();
  if (state->status == GlobalStatus::kSucceed) return std::move(state->result);
  if (state->status == GlobalStatus::kFailed) return Status::Conflict(state->rollback_reason);
  if (state->status != GlobalStatus::kPrepared) {
    return Status::Unavailable("workflow " + gid + " is " + std::string(ToString(state->status)));
  }
  Result<StepLog> log = StepLog::From(state->progresses);
  if (!log) return log.status();

  Workflow wf(link_, options_.options, gid, name, std::move(*log));
  std::optional<Result<std::string>> out;
  std::string thrown;
  asio::io_context io;
  asio::co_spawn(io, RunHandler(handler, wf, input, out), [&thrown](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& what) {
      thrown = what.what();
    } catch (...) {
      thrown = "an exception";
    }
  });
  io.run();
  if (!out) return Status::Internal("workflow " + name + " threw: " + thrown);
  Result<std::string> result = std::move(*out);
  // Neither ended nor failed: the run stops, and a resume goes on from the log.
  if (!result.ok() && !IsBusinessFailure(result.status())) return result.status();

  const bool succeeded = result.ok();
  if (Status s = succeeded ? wf.RunPhase2(wf.commits_, BranchOp::kCommit)
                           : wf.RunPhase2(wf.rollbacks_, BranchOp::kRollback);
      !s.ok()) {
    return s;
  }
  GlobalCall submit;
  submit.gid = gid;
  submit.trans_type = std::string(kWorkflow);
  submit.options.traceparent = options_.options.traceparent;
  submit.options.tracestate = options_.options.tracestate;
  submit.req_extra = {
      {"status", std::string(ToString(succeeded ? GlobalStatus::kSucceed : GlobalStatus::kFailed))},
      {"rollback_reason", succeeded ? std::string() : result.status().message()},
      {"result", succeeded ? Base64Encode(*result) : std::string()}};
  if (Result<std::string> sent = link_.Send(GlobalOp::kSubmit, submit); !sent) {
    // A 409 here is the coordinator's, not the business's: the next run reads how it ended.
    return Status::Unavailable("submitting workflow " + gid + ": " + sent.status().message());
  }
  if (!succeeded) return Status::Conflict(result.status().message());
  return result;
}

ResumeHandler Workflows::Resumer() {
  return [this](const ResumeRequest& resume) -> BranchReply {
    // Only a workflow that exists is resumed: Execute's prepareWorkflow would create one, with
    // the service's credentials, for whoever reaches this URL with a gid of his own.
    Result<std::optional<TransactionInfo>> known = link_.Query(resume.gid);
    if (!known) return BranchReply::Error(known.status());
    if (!known->has_value() || (*known)->trans_type != TransType::kWorkflow) {
      return BranchReply::Failure("no workflow " + resume.gid + " to resume");
    }
    Result<std::string> ran = Execute(resume.name, resume.gid, resume.input);
    if (ran.ok() || IsBusinessFailure(ran.status())) return BranchReply::Success();
    if (ran.status().code() == StatusCode::kPending) {
      return BranchReply::Ongoing(ran.status().message());
    }
    return BranchReply::Error(ran.status());
  };
}

}  // namespace settle::sdk
