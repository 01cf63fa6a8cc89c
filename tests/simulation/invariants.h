#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "clients.h"
#include "participant.h"
#include "settle/engine/branch_call.h"
#include "settle/storage/store.h"

namespace settle::simulation {

// What the coordinator promises (README.md, "Invariants"), judged from the database, what
// the clients were acknowledged and what the participant holds. Each check returns the first
// broken invariant, or "" when all hold.
class Invariants {
 public:
  Invariants(const std::vector<Client>& clients, const Participant& participant)
      : clients_(clients), participant_(participant) {}

  // After every step: a status only moves forward and a stored transaction stays; nothing
  // acknowledged is lost; a branch row recorded done was answered SUCCESS by the participant;
  // no TCC branch both confirmed and cancelled; no message delivered before its sender
  // committed. `note` receives each status change, for the history.
  std::string CheckStep(storage::Store& database, const std::function<void(std::string)>& note);

  // As the coordinator makes a call: a saga compensates a step only after every started step
  // that waited for it was compensated (reverse order).
  std::string CheckCallMade(const engine::BranchCall& call);
  // A coordinator heard `call` answered SUCCESS.
  void HeardSuccess(const engine::BranchCall& call);

  // Once settled: every transaction ended, and every call it still owed was made (TCC: each
  // registered branch confirmed or each cancelled; saga: every action held, or none; message:
  // every step delivered once its sender committed, none if not); nothing stays reserved.
  std::string CheckEnd(storage::Store& database);

 private:
  std::string CheckClientStep(const Client& c, const storage::Transaction* tx);
  std::string CheckEndOf(const Client& c, const storage::Transaction* tx);

  const std::vector<Client>& clients_;
  const Participant& participant_;
  std::map<std::string, GlobalStatus> last_status_;
  std::set<std::pair<std::string, int>> saga_actions_made_;       // (gid, step)
  std::set<std::pair<std::string, int>> saga_compensated_heard_;  // (gid, step)
};

}  // namespace settle::simulation
