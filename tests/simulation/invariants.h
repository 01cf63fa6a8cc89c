#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
  // committed; a workflow's recorded step is never executed again, and its phase 2 runs in
  // reverse over the recorded actions. `note` receives each status change, for the history.
  // `commits`: how many commits the database has been asked for; the transactions are read
  // again only when it moved (what the participant and the clients did is judged every time).
  std::string CheckStep(storage::Store& database, std::uint64_t commits,
                        const std::function<void(std::string)>& note);

  // As the coordinator makes a call: a saga compensates a step only after every started step
  // that waited for it was compensated (reverse order). (That no two resumes of a workflow
  // overlap, and the fence, the simulator checks: it sees every instance's pending calls.)
  std::string CheckCallMade(const engine::BranchCall& call);
  // A coordinator heard `call` answered SUCCESS.
  void HeardSuccess(const engine::BranchCall& call);

  // Once settled: every transaction ended, and every call it still owed was made (TCC: each
  // registered branch confirmed or each cancelled; saga: every action held, or none; message:
  // every step delivered once its sender committed, none if not; workflow: as its client
  // submitted it, every recorded action committed and held, or rolled back and none held);
  // nothing stays reserved.
  std::string CheckEnd(storage::Store& database);

 private:
  std::string CheckClientStep(const Client& c, const storage::Transaction* tx);
  std::string CheckEndOf(const Client& c, const storage::Transaction* tx);
  std::string CheckStepCalls(const Client& c, const storage::Transaction* tx);
  std::string CheckWorkflowEnd(const Client& c, const storage::Transaction& tx);

  const std::vector<Client>& clients_;
  const Participant& participant_;
  std::map<std::string, GlobalStatus> last_status_;
  std::optional<std::uint64_t> read_at_;  // the commits counted when `read_` was read
  std::map<std::string, std::optional<storage::Transaction>> read_;
  std::set<std::pair<std::string, int>> saga_actions_made_;       // (gid, step)
  std::set<std::pair<std::string, int>> saga_compensated_heard_;  // (gid, step)
  std::map<std::string, std::size_t> step_calls_checked_;         // workflow: per gid
};

}  // namespace settle::simulation
