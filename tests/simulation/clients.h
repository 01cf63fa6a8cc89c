#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "participant.h"
#include "settle/core/protocol.h"
#include "settle/net/message.h"

namespace settle::simulation {

// What a client's action may use: the seed's choices, the history, the participant, and the
// coordinator's HTTP API (a request to one running instance, answered some steps later, or
// never if that instance crashes first).
class ClientWorld {
 public:
  virtual ~ClientWorld() = default;
  virtual std::uint64_t Pick(std::uint64_t n) = 0;
  virtual bool Chance(int percent) = 0;
  virtual void Log(std::string line) = 0;
  virtual Participant& participant() = 0;
  // Sends `request` to one running instance; `on_answer` runs when it is answered (never, if
  // that instance crashes first). Returns the request's ticket, for InFlight.
  virtual std::uint64_t Send(net::Request request, std::string what,
                             std::function<void(const net::Response&)> on_answer) = 0;
  // The same, `on_ok` running only if the request is answered 200.
  std::uint64_t Send(net::Request request, std::string what, std::function<void()> on_ok);
  // Whether request `ticket` may still be answered: false once it was, or once its instance
  // crashed (its client's connection breaks).
  virtual bool InFlight(std::uint64_t ticket) const = 0;
  // Faults have stopped (the settling phase): a client runs to its end.
  virtual bool settling() const = 0;
};

// A workflow's run: one execution of its client's code (docs/protocol.md §3.16, as the SDK's
// Workflows::Run does it), which stops at any point (the service restarts) and is followed by
// another that replays the log. It acts only on what the coordinator acknowledged: the
// progresses its prepareWorkflow was answered, and its own records answered 200.
struct WorkflowRun {
  bool running = false;
  bool log_read = false;  // prepareWorkflow answered `prepared`: `log` holds its progresses
  std::map<std::pair<std::string, BranchOp>, BranchStatus> log;
  std::set<int> timed_out;  // steps run whose record was refused past timeout_to_fail
  // A step called at the participant, its record not yet acknowledged.
  struct Record {
    std::string branch;
    BranchOp op = BranchOp::kAction;
    BranchStatus status = BranchStatus::kSucceed;
    std::string data;
  };
  std::optional<Record> to_record;
  bool waiting = false;  // a request of this run is unanswered
  std::uint64_t ticket = 0;
  std::optional<std::pair<std::string, BranchOp>> recording;  // what that request records
};

// One simulated client with one gid, as DTM's SDKs drive the coordinator's HTTP API
// (docs/protocol.md §3), repeats and duplicates included. It records what the coordinator
// acknowledged (answered 200), which is what the invariants hold the coordinator to.
struct Client {
  TransType type = TransType::kTcc;
  std::string gid;
  bool prepare_ok = false;
  bool submit_sent = false;
  bool submit_ok = false;
  bool abort_ok = false;
  // TCC
  std::set<std::string> registered_ok;  // registerBranch answered OK
  std::set<std::string> tried;          // Try done at the participant
  int next_branch = 0;
  int max_branches = 3;
  // Saga and message: the steps, sent the same each time (a repeat is identical).
  int steps = 0;
  bool concurrent = false;  // saga: every action at once
  bool direct = false;      // message: submitted without a prepare (nothing to back-check)
  std::string body;
  // Workflow: its handler calls `steps` steps in order; the business refuses step `fails_at`'s
  // action (`refused`), or the handler itself fails after that step succeeded; -1: it succeeds.
  int fails_at = -1;
  bool refused = false;
  int runs = 0;           // runs started
  int resumes_seen = 0;   // the participant's count of resumes when the last run stopped
  int restarts_left = 1;  // the runs that may still stop while the simulation settles
  bool finished = false;  // its client knows how it ended (its submit answered, or read back)
  GlobalStatus submitted = GlobalStatus::kPrepared;  // the status its submit was answered 200 for
  std::set<std::tuple<std::string, BranchOp, BranchStatus>> recorded_ok;  // answered 200
  // Step records sent by a run that gave up on them: they may still be stored later, after
  // another run read the log without them (so that run runs the step again).
  std::set<std::pair<std::string, BranchOp>> abandoned;
  WorkflowRun run;

  // A client of `type`; the seed draws its shape (steps, options) through `world`.
  static Client Make(TransType type, std::string gid, ClientWorld& world, int max_branches);

  // One action, drawn by the seed, that its protocol allows it now.
  void Act(ClientWorld& world);

  // A workflow whose next action moves it on: its run waits for no request that may still be
  // answered, or, with no run, it was never started or has been resumed since.
  bool Ready(ClientWorld& world) const;
  // Settling: a workflow its client started and does not know the end of acts until it does,
  // unless a request of its run may still be answered (faults have stopped).
  bool MustAct(const ClientWorld& world) const;

 private:
  void ActTcc(ClientWorld& world);
  void ActSaga(ClientWorld& world);
  void ActMsg(ClientWorld& world);
  void ActWorkflow(ClientWorld& world);
  void StepWorkflow(ClientWorld& world);
  void StopRun(ClientWorld& world, const std::string& why);
  void SendInRun(ClientWorld& world, net::Request request, std::string what,
                 std::function<void(const net::Response&)> then);
  void ReadLog(ClientWorld& world, const net::Response& answer);
  void SendRecord(ClientWorld& world);
};

// Workflow step `i`'s branch id, as the SDK numbers them: "01", "02", ...
std::string BranchName(int i);

// POST /api/dtmsvr/<route> with a JSON body.
net::Request PostRequest(const std::string& route, std::string body);

}  // namespace settle::simulation
