#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "settle/core/protocol.h"

namespace settle::simulation {

// What the simulated participant answers a call it applied (the simulator may still lose the
// answer, or answer an error instead of delivering the call).
enum class Answer { kSuccess, kFailure, kOngoing };

// The participants of every simulated transaction, with a barrier of their own: per
// (gid, branch, op) whether it was done, so every call applies once however often it is
// delivered, and a compensation that arrives first blocks its action (the empty-rollback and
// hanging rules of docs/protocol.md §6.3). What they hold is what the invariants read.
//
// The URLs the simulated clients register name what is called (SimulatedUrl): TCC's confirm and
// cancel, saga step i's action and compensation, message step i's receiver, the message
// sender's query_prepared, workflow step i's action, commit and rollback (called by the
// workflow's client, not the coordinator) and the workflow's resume (its query_prepared).
class Participant {
 public:
  // TCC's Try, from the client: refused after the branch's cancel (the barrier's rule),
  // idempotent; holds an amount until the confirm or cancel.
  bool Try(const std::string& gid, const std::string& branch);

  // A call from the coordinator (or a late copy of one), or a workflow's step called by its
  // client, applied by the barrier's rules.
  // `refuse`: the business says no (a saga or workflow action's FAILURE; nothing is applied).
  // `still_deciding`: a back-check of a message whose local transaction is still open answers
  // ONGOING instead of rolling it back.
  // A workflow's resume is no business call: it is answered ONGOING (the client is running it,
  // HTTP 425) and counted, which tells the client to run the workflow again.
  Answer Deliver(const std::string& gid, const std::string& branch, BranchOp op,
                 const std::string& url, bool refuse, bool still_deciding);

  // A message sender's local transaction: Commit fails once a back-check rolled it back.
  bool CommitLocal(const std::string& gid);
  void RollBackLocal(const std::string& gid);
  enum class Local { kOpen, kCommitted, kRolledBack };
  Local LocalState(const std::string& gid) const;

  bool Done(const std::string& gid, const std::string& branch, BranchOp op) const {
    return done_.count({gid, branch, op}) > 0;
  }
  // A call answered SUCCESS at least once (to whoever sent it).
  bool AnsweredSuccess(const std::string& gid, const std::string& branch, BranchOp op) const {
    return succeeded_.count({gid, branch, op}) > 0;
  }
  // Saga: step `step`'s action holds its effect (applied, not compensated).
  bool ActionHeld(const std::string& gid, int step) const {
    return held_actions_.count({gid, step}) > 0;
  }
  const std::set<std::pair<std::string, int>>& held_actions() const { return held_actions_; }
  // Message: the steps delivered to their receivers.
  std::set<int> Delivered(const std::string& gid) const;
  const std::map<std::pair<std::string, std::string>, int>& reserved() const { return reserved_; }
  std::vector<std::string> Tried(const std::string& gid) const;
  // Workflow: the resumes delivered, and every step call its client made, in order (refused
  // ones included: each is an execution the client started).
  int Resumes(const std::string& gid) const {
    auto it = resumes_.find(gid);
    return it == resumes_.end() ? 0 : it->second;
  }
  struct StepCall {
    std::string branch;
    BranchOp op = BranchOp::kAction;
  };
  const std::vector<StepCall>& StepCalls(const std::string& gid) const {
    static const std::vector<StepCall> kNone;
    auto it = step_calls_.find(gid);
    return it == step_calls_.end() ? kNone : it->second;
  }

 private:
  std::set<std::tuple<std::string, std::string, BranchOp>> done_;
  std::set<std::tuple<std::string, std::string, BranchOp>> succeeded_;
  std::map<std::pair<std::string, std::string>, int> reserved_;  // TCC: Try until phase 2
  std::set<std::pair<std::string, int>> held_actions_;           // saga and workflow
  std::set<std::pair<std::string, int>> delivered_;              // message
  std::map<std::string, Local> local_;                           // message senders
  std::map<std::string, int> resumes_;                           // workflow
  std::map<std::string, std::vector<StepCall>> step_calls_;      // workflow
};

// The URL of what a simulated client registers or calls, and back: {kind, step}. Kinds:
// "tcc/confirm", "tcc/cancel", "saga/action", "saga/compensate", "msg", "query", "wf/action",
// "wf/commit", "wf/rollback", "wf/resume".
std::string SimulatedUrl(const std::string& kind, int step = 0);
std::pair<std::string, int> ParseSimulatedUrl(const std::string& url);

}  // namespace settle::simulation
