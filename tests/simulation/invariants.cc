#include "invariants.h"

#include <optional>

namespace settle::simulation {

namespace {

std::string Str(GlobalStatus s) { return std::string(ToString(s)); }
std::string Str(BranchOp op) { return std::string(ToString(op)); }

// Where a transaction of `type` may move from `from` (a status only moves forward).
bool Allowed(TransType type, GlobalStatus from, GlobalStatus to) {
  if (from == to) return true;
  switch (from) {
    case GlobalStatus::kPrepared:
      // A workflow ends from prepared, as its client's submit says.
      return to == GlobalStatus::kSubmitted || to == GlobalStatus::kAborting ||
             to == GlobalStatus::kFailed ||
             (type == TransType::kWorkflow && to == GlobalStatus::kSucceed);
    case GlobalStatus::kSubmitted:
      // A saga aborts from submitted (an action's FAILURE, its timeout, its retry_limit); a
      // TCC or a message without retry_limit only succeeds.
      return to == GlobalStatus::kSucceed ||
             (type == TransType::kSaga && to == GlobalStatus::kAborting);
    case GlobalStatus::kAborting:
      return to == GlobalStatus::kFailed;
    default:
      return false;
  }
}

// Saga step `j` waits (directly or not) for step `i`: sequential sagas only (a concurrent one
// without orders starts every action at once).
bool Waits(const Client& c, int j, int i) { return !c.concurrent && j > i; }

const Client* Find(const std::vector<Client>& clients, const std::string& gid) {
  for (const Client& c : clients) {
    if (c.gid == gid) return &c;
  }
  return nullptr;
}

const storage::BranchRecord* Row(const storage::Transaction& tx, const std::string& branch,
                                 BranchOp op) {
  for (const auto& row : tx.branches) {
    if (row.branch_id == branch && row.op == op) return &row;
  }
  return nullptr;
}

}  // namespace

std::string Invariants::CheckStep(storage::Store& database, std::uint64_t commits,
                                  const std::function<void(std::string)>& note) {
  if (read_at_ != commits) {
    for (const Client& c : clients_) {
      auto loaded = database.Load(c.gid);
      if (!loaded.ok()) return "Load " + c.gid + ": " + loaded.status().ToString();
      read_[c.gid] = std::move(*loaded);
    }
    read_at_ = commits;
  }
  for (const Client& c : clients_) {
    const std::optional<storage::Transaction>& stored = read_[c.gid];
    const storage::Transaction* tx = stored.has_value() ? &*stored : nullptr;
    if (tx != nullptr) {
      auto last = last_status_.find(c.gid);
      const GlobalStatus now = tx->global.status;
      if (last != last_status_.end() && !Allowed(c.type, last->second, now)) {
        return c.gid + ": status moved " + Str(last->second) + " -> " + Str(now);
      }
      if (last == last_status_.end() || last->second != now) {
        note("store: " + c.gid + " " + (last == last_status_.end() ? "stored" : Str(last->second)) +
             " -> " + Str(now));
      }
      last_status_[c.gid] = now;
    } else if (last_status_.count(c.gid)) {
      return c.gid + " was stored and is gone";
    }
    if (std::string broken = CheckClientStep(c, tx); !broken.empty()) return broken;
    if (std::string broken = CheckStepCalls(c, tx); !broken.empty()) return broken;
  }
  return "";
}

std::string Invariants::CheckClientStep(const Client& c, const storage::Transaction* tx) {
  if (tx == nullptr) {
    if (c.prepare_ok) return c.gid + ": prepare answered OK but nothing is stored";
    if (c.submit_ok) return c.gid + ": submit answered OK but nothing is stored";
    if (!c.registered_ok.empty()) return c.gid + ": a branch answered OK but no transaction";
    if (!participant_.Delivered(c.gid).empty()) return c.gid + ": delivered but not stored";
    return "";
  }
  const GlobalStatus now = tx->global.status;
  for (const std::string& b : c.registered_ok) {
    bool confirm = false, cancel = false;
    for (const auto& row : tx->branches) {
      if (row.branch_id != b) continue;
      confirm |= row.op == BranchOp::kConfirm;
      cancel |= row.op == BranchOp::kCancel;
    }
    if (!confirm || !cancel) return c.gid + "/" + b + ": registered OK but its rows are missing";
  }
  if (c.type != TransType::kSaga && c.type != TransType::kWorkflow && c.submit_ok &&
      now != GlobalStatus::kSubmitted && now != GlobalStatus::kSucceed) {
    return c.gid + ": submit answered OK but the status is " + Str(now);
  }
  if (c.type == TransType::kWorkflow && c.submit_ok && now != c.submitted) {
    return c.gid + ": submit " + Str(c.submitted) + " answered OK but the status is " + Str(now);
  }
  for (const auto& [branch, op, status] : c.recorded_ok) {
    const storage::BranchRecord* row = Row(*tx, branch, op);
    if (row == nullptr || row->status != status) {
      return c.gid + "/" + branch + "/" + Str(op) + ": recorded " + std::string(ToString(status)) +
             " (answered OK) but " +
             (row == nullptr ? "not stored" : "stored " + std::string(ToString(row->status)));
    }
  }
  if (c.abort_ok && now != GlobalStatus::kAborting && now != GlobalStatus::kFailed) {
    return c.gid + ": abort answered OK but the status is " + Str(now);
  }
  for (const auto& row : tx->branches) {
    if (row.status == BranchStatus::kSucceed &&
        !participant_.AnsweredSuccess(c.gid, row.branch_id, row.op)) {
      return c.gid + "/" + row.branch_id + "/" + Str(row.op) +
             ": recorded done, but the participant never answered it SUCCESS";
    }
    if (participant_.Done(c.gid, row.branch_id, BranchOp::kConfirm) &&
        participant_.Done(c.gid, row.branch_id, BranchOp::kCancel)) {
      return c.gid + "/" + row.branch_id + ": both confirmed and cancelled at the participant";
    }
  }
  if (c.type == TransType::kMsg && !participant_.Delivered(c.gid).empty() &&
      participant_.LocalState(c.gid) != Participant::Local::kCommitted) {
    return c.gid + ": delivered although its sender's local transaction did not commit";
  }
  return "";
}

// The step calls a workflow's client made since the last step, judged against the store as it
// was when they were made (a client's action changes nothing stored: its requests are answered
// in later steps).
std::string Invariants::CheckStepCalls(const Client& c, const storage::Transaction* tx) {
  if (c.type != TransType::kWorkflow) return "";
  const std::vector<Participant::StepCall>& calls = participant_.StepCalls(c.gid);
  std::size_t& checked = step_calls_checked_[c.gid];
  for (; checked < calls.size(); ++checked) {
    const Participant::StepCall& call = calls[checked];
    const std::string name = c.gid + "/" + call.branch;
    if (tx == nullptr) return name + ": a step called for a workflow not stored";
    if (call.op == BranchOp::kAction) {
      // A recorded step is never executed again, unless a record that its run gave up on (and
      // so did not tell the next run) landed after that run read the log.
      if (Row(*tx, call.branch, BranchOp::kAction) != nullptr &&
          !c.abandoned.count({call.branch, BranchOp::kAction})) {
        return name + ": its action is executed again although it is recorded";
      }
      continue;
    }
    // Phase 2 runs in reverse over the recorded actions: a step's commit (rollback) only once
    // every later step recorded succeeded (recorded at all) has its commit (rollback) stored.
    for (const auto& row : tx->branches) {
      if (row.op != BranchOp::kAction || row.branch_id <= call.branch) continue;
      if (call.op == BranchOp::kCommit && row.status != BranchStatus::kSucceed) continue;
      if (Row(*tx, row.branch_id, call.op) == nullptr) {
        return name + ": its " + Str(call.op) + " runs before step " + row.branch_id +
               "'s, recorded later, is stored";
      }
    }
  }
  return "";
}

std::string Invariants::CheckCallMade(const engine::BranchCall& call) {
  if (call.trans_type != TransType::kSaga) return "";
  const auto [kind, step] = ParseSimulatedUrl(call.url);
  if (kind == "saga/action") {
    saga_actions_made_.insert({call.gid, step});
    return "";
  }
  if (kind != "saga/compensate") return "";
  const Client* c = Find(clients_, call.gid);
  if (c == nullptr) return call.gid + ": a call for a transaction no client made";
  for (int j = 0; j < c->steps; ++j) {
    if (!Waits(*c, j, step) || !saga_actions_made_.count({call.gid, j})) continue;
    if (!saga_compensated_heard_.count({call.gid, j})) {
      return call.gid + ": compensates step " + std::to_string(step) + " before step " +
             std::to_string(j) + ", which waited for it and started, was compensated";
    }
  }
  return "";
}

void Invariants::HeardSuccess(const engine::BranchCall& call) {
  const auto [kind, step] = ParseSimulatedUrl(call.url);
  if (kind == "saga/compensate") saga_compensated_heard_.insert({call.gid, step});
}

std::string Invariants::CheckEnd(storage::Store& database) {
  for (const Client& c : clients_) {
    auto loaded = database.Load(c.gid);
    if (!loaded.ok()) return "Load " + c.gid + ": " + loaded.status().ToString();
    if (std::string broken = CheckEndOf(c, loaded->has_value() ? &**loaded : nullptr);
        !broken.empty()) {
      return broken;
    }
  }
  for (const auto& [key, amount] : participant_.reserved()) {
    return key.first + "/" + key.second + ": " + std::to_string(amount) +
           " still reserved at the participant";
  }
  return "";
}

std::string Invariants::CheckEndOf(const Client& c, const storage::Transaction* tx) {
  const Participant::Local local = participant_.LocalState(c.gid);
  if (tx == nullptr) {
    if (!participant_.Tried(c.gid).empty()) return c.gid + ": tried but never stored";
    for (int i = 0; i < c.steps; ++i) {
      if (participant_.ActionHeld(c.gid, i)) return c.gid + ": an action held, never stored";
    }
    if (c.type == TransType::kMsg && !c.direct && local == Participant::Local::kCommitted) {
      return c.gid + ": its sender committed but the message was never stored";
    }
    return "";
  }
  const GlobalStatus s = tx->global.status;
  if (s != GlobalStatus::kSucceed && s != GlobalStatus::kFailed) {
    return c.gid + ": ended " + Str(s);
  }
  switch (c.type) {
    case TransType::kWorkflow:
      return CheckWorkflowEnd(c, *tx);
    case TransType::kSaga:
      for (int i = 0; i < c.steps; ++i) {
        const bool held = participant_.ActionHeld(c.gid, i);
        if (s == GlobalStatus::kSucceed && !held) {
          return c.gid + " succeeded but step " + std::to_string(i) + "'s action is not held";
        }
        if (s == GlobalStatus::kFailed && held) {
          return c.gid + " failed but step " + std::to_string(i) +
                 "'s action was never compensated";
        }
      }
      return "";
    case TransType::kMsg: {
      const std::set<int> delivered = participant_.Delivered(c.gid);
      if (s == GlobalStatus::kSucceed) {
        if (local != Participant::Local::kCommitted) {
          return c.gid + " succeeded but its sender's local transaction did not commit";
        }
        if (static_cast<int>(delivered.size()) != c.steps) {
          return c.gid + " succeeded with " + std::to_string(delivered.size()) + " of " +
                 std::to_string(c.steps) + " steps delivered";
        }
      } else {
        if (!delivered.empty()) return c.gid + " failed but was delivered";
        if (local == Participant::Local::kCommitted) {
          return c.gid + " failed although its sender's local transaction committed";
        }
      }
      return "";
    }
    default: {
      const BranchOp want = s == GlobalStatus::kSucceed ? BranchOp::kConfirm : BranchOp::kCancel;
      std::set<std::string> branches;
      for (const auto& row : tx->branches) branches.insert(row.branch_id);
      for (const std::string& b : participant_.Tried(c.gid)) {
        if (!branches.count(b)) return c.gid + "/" + b + ": tried at the participant, not stored";
      }
      for (const std::string& b : branches) {
        if (!participant_.Done(c.gid, b, want)) {
          return c.gid + " is " + Str(s) + " but its registered branch " + b + " never got its " +
                 Str(want) + " at the participant";
        }
      }
      return "";
    }
  }
}

// A workflow ended as its client submitted it, with its phase 2 recorded over every recorded
// action, and the participant holds what that says: succeed, every step's action held and
// committed; failed, every recorded action rolled back and nothing held.
std::string Invariants::CheckWorkflowEnd(const Client& c, const storage::Transaction& tx) {
  const GlobalStatus s = tx.global.status;
  if (!c.finished) return c.gid + " is " + Str(s) + " but its client never learnt how it ended";
  if (c.submitted != s) {
    return c.gid + " is " + Str(s) + " but its client ended it " + Str(c.submitted);
  }
  const bool succeeded = s == GlobalStatus::kSucceed;
  const BranchOp phase2 = succeeded ? BranchOp::kCommit : BranchOp::kRollback;
  const BranchOp other = succeeded ? BranchOp::kRollback : BranchOp::kCommit;
  for (const auto& row : tx.branches) {
    if (row.op == other) return c.gid + "/" + row.branch_id + " has a " + Str(other) + " row";
    if (row.op == BranchOp::kAction && Row(tx, row.branch_id, phase2) == nullptr) {
      return c.gid + " is " + Str(s) + " but step " + row.branch_id + "'s action has no " +
             Str(phase2) + " row";
    }
  }
  for (int i = 0; i < c.steps; ++i) {
    const std::string branch = BranchName(i);
    const bool held = participant_.ActionHeld(c.gid, i);
    if (!succeeded && held) return c.gid + " failed but step " + branch + "'s action is held";
    if (!succeeded) continue;
    const storage::BranchRecord* action = Row(tx, branch, BranchOp::kAction);
    if (action == nullptr || action->status != BranchStatus::kSucceed) {
      return c.gid + " succeeded but step " + branch + "'s action is not recorded succeed";
    }
    if (!held || !participant_.Done(c.gid, branch, BranchOp::kCommit)) {
      return c.gid + " succeeded but step " + branch + " is not held and committed";
    }
  }
  return "";
}

}  // namespace settle::simulation
