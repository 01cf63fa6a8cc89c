#include "participant.h"

namespace settle::simulation {

namespace {
constexpr const char* kBase = "http://participant.sim/";
}  // namespace

std::string SimulatedUrl(const std::string& kind, int step) {
  return kBase + kind + "/" + std::to_string(step);
}

std::pair<std::string, int> ParseSimulatedUrl(const std::string& url) {
  const std::string base = kBase;
  if (url.compare(0, base.size(), base) != 0) return {"", -1};
  const std::string rest = url.substr(base.size());
  const std::size_t slash = rest.rfind('/');
  if (slash == std::string::npos) return {"", -1};
  return {rest.substr(0, slash), std::stoi(rest.substr(slash + 1))};
}

bool Participant::Try(const std::string& gid, const std::string& branch) {
  if (done_.count({gid, branch, BranchOp::kCancel})) return false;
  if (done_.insert({gid, branch, BranchOp::kTry}).second) reserved_[{gid, branch}] = 30;
  return true;
}

Answer Participant::Deliver(const std::string& gid, const std::string& branch, BranchOp op,
                            const std::string& url, bool refuse, bool still_deciding) {
  const auto [kind, step] = ParseSimulatedUrl(url);
  if (kind == "wf/resume") {
    // The client runs the workflow again (from its log); settled hears it is running.
    ++resumes_[gid];
    return Answer::kOngoing;
  }
  const bool workflow_step = kind.starts_with("wf/");
  if (workflow_step) step_calls_[gid].push_back({branch, op});
  Answer answer = Answer::kSuccess;
  if (kind == "query") {
    // DTM's QueryPrepared with a barrier: a back-check of an open local transaction rolls it
    // back (inserts the rollback marker), so a later commit fails.
    Local& local = local_[gid];
    if (local == Local::kCommitted) {
      answer = Answer::kSuccess;
    } else if (local == Local::kOpen && still_deciding) {
      answer = Answer::kOngoing;
    } else {
      local = Local::kRolledBack;
      answer = Answer::kFailure;
    }
  } else if (refuse) {
    return Answer::kFailure;  // the business refused; its barrier row rolled back with it
  } else if (done_.insert({gid, branch, op}).second) {
    if (op == BranchOp::kConfirm || op == BranchOp::kCancel) {
      reserved_.erase({gid, branch});
    } else if (kind == "saga/action" || kind == "wf/action") {
      // An action after its compensation (a workflow's rollback) is blocked (hanging):
      // answered, nothing held.
      const BranchOp undo = workflow_step ? BranchOp::kRollback : BranchOp::kCompensate;
      if (!done_.count({gid, branch, undo})) held_actions_.insert({gid, step});
    } else if (kind == "saga/compensate" || kind == "wf/rollback") {
      held_actions_.erase({gid, step});
    } else if (kind == "msg") {
      delivered_.insert({gid, step});
    }
  }
  if (answer == Answer::kSuccess) succeeded_.insert({gid, branch, op});
  return answer;
}

bool Participant::CommitLocal(const std::string& gid) {
  Local& local = local_[gid];
  if (local == Local::kRolledBack) return false;
  local = Local::kCommitted;
  return true;
}

void Participant::RollBackLocal(const std::string& gid) {
  Local& local = local_[gid];
  if (local == Local::kOpen) local = Local::kRolledBack;
}

Participant::Local Participant::LocalState(const std::string& gid) const {
  auto it = local_.find(gid);
  return it == local_.end() ? Local::kOpen : it->second;
}

std::set<int> Participant::Delivered(const std::string& gid) const {
  std::set<int> out;
  for (const auto& [g, step] : delivered_) {
    if (g == gid) out.insert(step);
  }
  return out;
}

std::vector<std::string> Participant::Tried(const std::string& gid) const {
  std::vector<std::string> out;
  for (const auto& [g, b, op] : done_) {
    if (g == gid && op == BranchOp::kTry) out.push_back(b);
  }
  return out;
}

}  // namespace settle::simulation
