#include "settle/engine/saga_engine.h"

#include <algorithm>
#include <limits>

#include "settle/engine/new_records.h"
#include "settle/engine/request_rules.h"

namespace settle::engine {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

struct Step {
  std::size_t action = kNone;      // index into tx.branches
  std::size_t compensate = kNone;  // index into tx.branches
  std::vector<int> waits_for;      // indexes of prerequisite steps
};

std::vector<Step> StepsOf(const storage::Transaction& tx) {
  int count = 0;
  for (const auto& b : tx.branches) count = std::max(count, b.seq + 1);
  std::vector<Step> steps(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < tx.branches.size(); ++i) {
    const storage::BranchRecord& b = tx.branches[i];
    if (b.seq < 0) continue;
    Step& step = steps[static_cast<std::size_t>(b.seq)];
    if (b.op == BranchOp::kAction) step.action = i;
    if (b.op == BranchOp::kCompensate) step.compensate = i;
  }
  const storage::TransOptions& options = tx.global.options;
  for (int i = 0; i < count; ++i) {
    Step& step = steps[static_cast<std::size_t>(i)];
    if (!options.concurrent) {
      if (i > 0) step.waits_for = {i - 1};
    } else if (auto it = options.orders.find(i); it != options.orders.end()) {
      step.waits_for = it->second;
    }
  }
  return steps;
}

bool Succeeded(const storage::Transaction& tx, std::size_t row) {
  return row == kNone || tx.branches[row].status == BranchStatus::kSucceed;
}

bool PrerequisitesSucceeded(const storage::Transaction& tx, const std::vector<Step>& steps,
                            const Step& step) {
  for (int p : step.waits_for) {
    if (p < 0 || static_cast<std::size_t>(p) >= steps.size()) continue;
    if (!Succeeded(tx, steps[static_cast<std::size_t>(p)].action)) return false;
  }
  return true;
}

void CallOrWait(const storage::Transaction& tx, std::size_t row, TimePoint now, Decision& d) {
  const TimePoint due = tx.branches[row].next_retry_at;
  if (due <= now) {
    d.calls.push_back(row);
  } else {
    d.wake_at = d.wake_at ? std::min(*d.wake_at, due) : due;
  }
}

// Named by the branch id, as /query and the admin console show the rows.
std::string BranchName(const storage::BranchRecord& row) { return "branch " + row.branch_id; }

// Steps whose action may have started: every step whose prerequisites all succeeded, even if
// no outcome was recorded before a crash.
std::vector<bool> StartedSteps(const storage::Transaction& tx, const std::vector<Step>& steps) {
  std::vector<bool> started(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    started[i] = steps[i].action != kNone && PrerequisitesSucceeded(tx, steps, steps[i]);
  }
  return started;
}

Decision RunActions(const storage::Transaction& tx, const std::vector<Step>& steps, TimePoint now) {
  const storage::GlobalRecord& g = tx.global;
  Decision d;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].action == kNone) continue;
    const storage::BranchRecord& action = tx.branches[steps[i].action];
    if (action.status == BranchStatus::kFailed) {
      d.next_status = GlobalStatus::kAborting;
      d.reason = BranchName(action) + " action failed: " + action.last_error;
      return d;
    }
    if (g.options.retry_limit > 0 && action.status == BranchStatus::kPrepared &&
        action.failures >= g.options.retry_limit) {
      d.next_status = GlobalStatus::kAborting;
      d.reason = BranchName(action) + " action failed " + std::to_string(action.failures) +
                 " times (retry_limit): " + action.last_error;
      return d;
    }
  }
  const bool has_deadline = g.options.timeout_to_fail.count() > 0;
  const TimePoint deadline = g.create_time + g.options.timeout_to_fail;
  if (has_deadline && now >= deadline) {
    d.next_status = GlobalStatus::kAborting;
    d.reason = "timeout_to_fail: actions not finished within " +
               std::to_string(g.options.timeout_to_fail.count()) + " ms";
    return d;
  }
  bool all_succeeded = true;
  for (const Step& step : steps) {
    if (Succeeded(tx, step.action)) continue;
    all_succeeded = false;
    if (!PrerequisitesSucceeded(tx, steps, step)) continue;
    const std::size_t calls_before = d.calls.size();
    CallOrWait(tx, step.action, now, d);
    if (d.calls.size() == calls_before) continue;
    for (int p : step.waits_for) {
      if (p < 0 || static_cast<std::size_t>(p) >= steps.size()) continue;
      const std::size_t prerequisite = steps[static_cast<std::size_t>(p)].action;
      if (prerequisite != kNone) d.stored_before_calls.push_back(prerequisite);
    }
  }
  if (all_succeeded) {
    d.next_status = GlobalStatus::kSucceed;
    return d;
  }
  if (has_deadline && d.calls.empty()) {
    d.wake_at = d.wake_at ? std::min(*d.wake_at, deadline) : deadline;
  }
  return d;
}

Decision RunCompensations(const storage::Transaction& tx, const std::vector<Step>& steps,
                          TimePoint now) {
  // A started step may have had its action delivered: it is compensated.
  const std::vector<bool> started = StartedSteps(tx, steps);
  Decision d;
  bool all_compensated = true;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!started[i] || Succeeded(tx, steps[i].compensate)) continue;
    all_compensated = false;
    bool dependents_compensated = true;
    for (std::size_t j = 0; j < steps.size(); ++j) {
      if (j == i || !started[j]) continue;
      const auto& waits = steps[j].waits_for;
      if (std::find(waits.begin(), waits.end(), static_cast<int>(i)) == waits.end()) continue;
      if (!Succeeded(tx, steps[j].compensate)) dependents_compensated = false;
    }
    if (dependents_compensated) CallOrWait(tx, steps[i].compensate, now, d);
  }
  if (all_compensated) d.next_status = GlobalStatus::kFailed;
  return d;
}

// Kahn's algorithm over the waits-for graph: every step must be reachable without a cycle.
bool HasCycle(const std::map<int, std::vector<int>>& orders, std::size_t steps) {
  std::vector<int> pending(steps, 0);
  std::vector<std::vector<int>> dependents(steps);
  for (const auto& [step, waits] : orders) {
    for (int w : waits) {
      ++pending[static_cast<std::size_t>(step)];
      dependents[static_cast<std::size_t>(w)].push_back(step);
    }
  }
  std::vector<int> ready;
  for (std::size_t i = 0; i < steps; ++i) {
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const int step = ready.back();
    ready.pop_back();
    ++done;
    for (int d : dependents[static_cast<std::size_t>(step)]) {
      if (--pending[static_cast<std::size_t>(d)] == 0) ready.push_back(d);
    }
  }
  return done != steps;
}

// The engine relies on this: StepsOf reads orders without checking them again.
Status CheckOrders(const std::map<int, std::vector<int>>& orders, std::size_t steps) {
  for (const auto& [step, waits] : orders) {
    const std::string path = "custom_data.orders." + std::to_string(step);
    if (step < 0 || static_cast<std::size_t>(step) >= steps)
      return FieldError(path, "no such step");
    for (int w : waits) {
      if (w < 0 || static_cast<std::size_t>(w) >= steps) {
        return FieldError(path, "waits for step " + std::to_string(w) + ", which does not exist");
      }
      if (w == step) return FieldError(path, "a step cannot wait for itself");
    }
  }
  if (HasCycle(orders, steps)) {
    return FieldError("custom_data.orders", "the steps wait for each other in a cycle");
  }
  return Status::Ok();
}

}  // namespace

Status CheckSaga(const SubmitRequest& request) {
  const auto& steps = request.steps;
  if (Status s = CheckStepCounts("a saga", steps.size(), request.payloads.size()); !s.ok()) {
    return s;
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string path = IndexPath("steps", i);
    if (Status s = CheckUrl(path + ".action", steps[i].action_url, true); !s.ok()) return s;
    if (Status s = CheckUrl(path + ".compensate", steps[i].compensate_url, false); !s.ok()) {
      return s;
    }
  }
  return CheckOrders(request.options.orders, steps.size());
}

std::vector<storage::BranchRecord> SagaRows(const SubmitRequest& request, TimePoint now) {
  std::vector<storage::BranchRecord> rows;
  rows.reserve(2 * request.steps.size());
  for (std::size_t i = 0; i < request.steps.size(); ++i) {
    const RequestStep& step = request.steps[i];
    const int seq = static_cast<int>(i);
    const std::string branch_id = BranchIdForIndex(i);
    const SharedBytes payload(request.payloads[i]);  // the action's and compensate's, stored once
    rows.push_back(NewBranchRow(request.gid, branch_id, BranchOp::kAction, seq, step.action_url,
                                payload, now));
    storage::BranchRecord compensate = NewBranchRow(request.gid, branch_id, BranchOp::kCompensate,
                                                    seq, step.compensate_url, payload, now);
    if (step.compensate_url.empty()) compensate.status = BranchStatus::kSucceed;
    rows.push_back(std::move(compensate));
  }
  return rows;
}

std::vector<bool> SagaRowsStillCalled(const storage::Transaction& tx) {
  std::vector<bool> called(tx.branches.size());
  const std::vector<Step> steps = StepsOf(tx);
  const GlobalStatus status = tx.global.status;
  if (status != GlobalStatus::kSubmitted && status != GlobalStatus::kAborting) return called;
  const std::vector<bool> started = StartedSteps(tx, steps);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::size_t row =
        status == GlobalStatus::kSubmitted ? steps[i].action : steps[i].compensate;
    if (row == kNone || tx.branches[row].status != BranchStatus::kPrepared) continue;
    called[row] = status == GlobalStatus::kSubmitted || started[i];
  }
  return called;
}

Decision DecideSaga(const storage::Transaction& tx, TimePoint now) {
  switch (tx.global.status) {
    case GlobalStatus::kSubmitted:
      return RunActions(tx, StepsOf(tx), now);
    case GlobalStatus::kAborting:
      return RunCompensations(tx, StepsOf(tx), now);
    case GlobalStatus::kPrepared:
    case GlobalStatus::kSucceed:
    case GlobalStatus::kFailed:
      return {};
  }
  return {};
}

namespace {

Result<std::vector<storage::BranchRecord>> SubmittedSagaRows(const SubmitRequest& request,
                                                             const TopicSubscribers&,
                                                             TimePoint now) {
  return SagaRows(request, now);
}

// An action's FAILURE rolls the saga back; a compensation must succeed in the end.
FailureMeaning SagaFailure(BranchOp op) {
  return op == BranchOp::kAction ? FailureMeaning::kFinal : FailureMeaning::kParticipantBug;
}

}  // namespace

const TypeRules& SagaRules() {
  static const TypeRules rules{
      .type = TransType::kSaga,
      .carries_steps = true,
      .custom_data = {.object_required = true, .concurrent_and_orders = true},
      .check_submit = CheckSaga,
      .submitted_rows = SubmittedSagaRows,
      .submit = {.moves_prepared = false, .creates = true, .carries_content = true},
      .decide = DecideSaga,
      .rows_still_called = SagaRowsStillCalled,
      .failure_of = SagaFailure,
      .default_deadline = false,
      .article_name = "a saga",
  };
  return rules;
}

}  // namespace settle::engine
