#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "check_plan.h"
#include "check_report.h"
#include "participant_client.h"
#include "settle/core/status.h"
#include "state_reader.h"

namespace settle::checker {

// What a run needs besides the participant.
struct RunSettings {
  CheckPlan plan;
  std::map<BranchOp, std::string> urls;  // one for every op the plan calls
  std::string body;                      // sent with every branch call
  std::optional<std::string> state_url;  // without it, effects are UNVERIFIED
  std::string gid_prefix;                // check i runs on gid "<prefix>-<i+1>"
};

// Runs a plan's checks one at a time against `client`, each on a gid of its own with branch id
// "01". Not thread-safe; `client` must outlive the runner.
class CheckRunner {
 public:
  CheckRunner(ParticipantClient& client, RunSettings settings);

  std::size_t size() const { return settings_.plan.checks.size(); }
  std::string GidFor(std::size_t index) const;

  // Reads the state once before any check, so that a --state URL that cannot work is told
  // apart from a participant that breaks a guarantee. Unavailable unless it answers 200; OK
  // when there is no state URL.
  Status ProbeState();

  // Runs check `index` (< size()) and judges it. Unavailable when the participant could not be
  // reached at all: that check then has no verdict.
  Result<CheckOutcome> Run(std::size_t index);

 private:
  ParticipantClient& client_;
  RunSettings settings_;
  StateReader state_;
};

// "settle-check-" and 8 random hex digits: distinct between runs, so that the participant's
// barrier treats every run as new transactions (and an entry point's guard, as new keys).
std::string RandomGidPrefix();

}  // namespace settle::checker
