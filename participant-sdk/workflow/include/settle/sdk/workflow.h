#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "settle/async/asio.h"
#include "settle/core/status.h"
#include "settle/sdk/branch_request.h"
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/resume_request.h"
#include "settle/sdk/step_log.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// Workflows (docs/protocol.md §3.16): a transaction written as straight-line code, a coroutine
// whose every step is recorded by the coordinator once and handed back, not run again, when
// the workflow runs again after a crash. The coordinator resumes an unfinished workflow by
// calling the service's resume URL (Participant::OnResume with Workflows::Resumer); the run
// then replays the recorded steps and goes on from the first one not recorded.
//
// GCC 12 and coroutines (settle/async/asio.h): in a handler, a co_await is a statement of its
// own or the whole right-hand side of an initialization; await a named WorkflowStep:
//
//   WorkflowStep reserve{"reserve", [&](const BranchRequest& step) { ... }};
//   reserve.on_rollback = [&](const BranchRequest& step) { ... };
//   Result<std::string> reserved = co_await wf.Do(reserve);

// What a step does, given its call as a participant would receive it (gid, trans_type
// workflow, its branch id "01", "02", ... in the order the handler asks for steps, op action),
// which a Barrier guards as it guards a branch call: its output. Conflict (or NotFound,
// AlreadyExists) when the business says no: the step is recorded failed and Do answers that
// Conflict (return it from the handler and the workflow fails: the steps before it are rolled
// back). Any other error is not recorded: the run stops there, and the workflow's next run
// calls the step again.
using StepAction = std::function<Result<std::string>(const BranchRequest& step)>;
// A step's phase 2 (op commit after the workflow succeeded, rollback after it failed), given
// its call likewise: must succeed in the end; an error stops the run, and the next run calls it
// again (a Barrier makes that safe).
using StepPhase2 = std::function<Status(const BranchRequest& step)>;

// One step: its name (1 to 64 characters of [A-Za-z0-9_.-], recorded with it), its action and
// its phase 2, either part optional. After the handler fails, the steps it ran are rolled back
// in reverse order, a step whose action failed included (as a saga compensates its failed
// action: a refusal may come after part of the work; a Barrier makes the rollback of a step
// that did nothing an empty one); after it succeeds, the steps that succeeded are committed in
// reverse order.
struct WorkflowStep {
  std::string name;
  StepAction action;
  StepPhase2 on_commit;
  StepPhase2 on_rollback;
};

class Workflow {
 public:
  const std::string& gid() const { return gid_; }
  const std::string& name() const { return name_; }

  // The step's output: recorded once, handed back on every later run. InvalidArgument for a
  // step without a valid name or action; Internal when the step log holds another step at this
  // place (StepLog::Find); Unavailable when its outcome could not be recorded (the next run
  // calls it again). Return any of them from the handler: the run stops, the workflow goes on
  // later. Conflict too when the coordinator refuses to record the step because the
  // workflow's timeout_to_fail has passed: the step is rolled back with the others, and the
  // workflow fails.
  asio::awaitable<Result<std::string>> Do(const WorkflowStep& step);

  // A step whose action is a call to a branch URL (an http(s):// URL, or a gRPC method with a
  // gRPC link), made through the workflows' CoordinatorLink with the protocol's parameters
  // (gid, trans_type=workflow, branch_id, op=action: a participant's barrier guards it as a
  // saga's action) and `body`: its answer's body on SUCCESS; FAILURE is the business saying no.
  WorkflowStep CallStep(std::string name, std::string url, std::string body) const;
  // A phase 2 that calls `url` likewise (op commit or rollback) with `body`.
  StepPhase2 CallPhase2(std::string url, std::string body) const;
  // A saga's branch as a step: its action as the step's action (op action), its compensation as
  // the rollback (op compensate), each called with `body`, so that a participant's OnAction and
  // OnCompensate routes and its barrier serve it as they serve a saga's. (CallStep and
  // CallPhase2 send DTM's workflow ops instead: action, commit, rollback.)
  struct SagaUrls {
    std::string action_url;
    std::string compensate_url;
  };
  WorkflowStep SagaStep(std::string name, const SagaUrls& urls, const std::string& body) const;
  // A TCC branch as a step: its Try as the action, its Confirm as the commit and its Cancel as
  // the rollback, each called with `body` and the ops try, confirm and cancel (trans_type
  // workflow), so that a participant's TCC routes (OnTry, OnConfirm, OnCancel) and its
  // barrier serve it as they serve a TCC's. The Try's answer body is the step's output; its
  // FAILURE fails the step, and the Cancel runs as for every failed step.
  struct TccUrls {
    std::string try_url;
    std::string confirm_url;
    std::string cancel_url;
  };
  WorkflowStep TccStep(std::string name, const TccUrls& urls, const std::string& body) const;

 private:
  friend class Workflows;
  struct Phase2 {
    std::string branch_id;
    std::string step;
    StepPhase2 call;
  };
  Workflow(CoordinatorLink& link, const TransOptions& options, std::string gid, std::string name,
           StepLog log)
      : link_(link),
        options_(options),
        gid_(std::move(gid)),
        name_(std::move(name)),
        log_(std::move(log)) {}
  BranchRequest CallOf(const std::string& branch_id, BranchOp op) const;
  Status Record(const std::string& branch_id, BranchOp op, BranchStatus status,
                const std::string& data);
  // Phase 2 over `items`, last first: each recorded once.
  Status RunPhase2(const std::vector<Phase2>& items, BranchOp op);

  CoordinatorLink& link_;
  const TransOptions& options_;
  std::string gid_;
  std::string name_;
  StepLog log_;
  std::size_t steps_ = 0;
  std::vector<Phase2> commits_;
  std::vector<Phase2> rollbacks_;
};

// A workflow's code: a coroutine given the workflow and its input, answering its result; a
// Conflict (a step's, or its own) fails the workflow with that message as its reason; another
// error stops the run before the end (the coordinator resumes the workflow later).
using WorkflowHandler = std::function<asio::awaitable<Result<std::string>>(Workflow&, std::string)>;

struct WorkflowsOptions {
  // This service's resume URL (Participant::OnResume): the workflows' query_prepared.
  std::string resume_url;
  // Sent with each prepareWorkflow: retry_interval (the first resume comes that long after a
  // run stops reporting), timeout_to_fail, branch_headers, ...
  TransOptions options;
};

// The workflows a service runs, by name, on one coordinator link. Thread-safe; a gid runs at
// most once at a time in one Workflows (a second run, such as a resume arriving while its
// client still runs it, answers Pending).
class Workflows {
 public:
  Workflows(CoordinatorLink& link, WorkflowsOptions options);

  // InvalidArgument for a name the coordinator refuses (empty, not printable ASCII, over 256
  // characters, or a branch op's: docs/protocol.md §3.16) or one already registered.
  Status Register(const std::string& name, WorkflowHandler handler);

  // Runs workflow `name` as `gid` with `input`: prepareWorkflow (which answers the stored state
  // of a gid that exists), the handler over the step log, the steps' phase 2, and the submit
  // that ends it. Its result when it succeeded (now or before); Conflict with its reason when it
  // failed; InvalidArgument when the gid holds another transaction or this workflow with
  // other input; Pending when this gid runs here already; any other error when the run stopped
  // before the end (a step's, the coordinator unreachable): the coordinator resumes it.
  Result<std::string> Execute(const std::string& name, const std::string& gid,
                              const std::string& input);

  // The resume URL's handler (Participant::OnResume): Execute for the call's name, gid and
  // input, for a workflow the coordinator knows (FAILURE for a gid it does not: a resume never
  // starts a workflow). SUCCESS when the workflow ended (succeed or failed: it is submitted),
  // ONGOING when it runs here already, an error otherwise (the coordinator calls again, with
  // backoff).
  ResumeHandler Resumer();

 private:
  Result<std::string> Run(const std::string& name, const WorkflowHandler& handler,
                          const std::string& gid, const std::string& input);

  CoordinatorLink& link_;
  const WorkflowsOptions options_;
  std::mutex mutex_;
  std::map<std::string, WorkflowHandler> handlers_;
  std::set<std::string> running_;
};

}  // namespace settle::sdk
