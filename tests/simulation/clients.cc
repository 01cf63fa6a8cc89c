#include "clients.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <utility>
#include <vector>

#include "settle/core/base64.h"

namespace settle::simulation {

namespace {

std::string Str(GlobalStatus s) { return std::string(ToString(s)); }
std::string Str(BranchStatus s) { return std::string(ToString(s)); }
std::string Str(BranchOp op) { return std::string(ToString(op)); }

// What a workflow's client keeps of its one result (base64 in its submit).
constexpr const char* kWorkflowResult = "transferred";

std::string Short(const std::string& body) {
  return body.size() <= 160 ? body : body.substr(0, 157) + "...";
}

}  // namespace

std::string BranchName(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "%02d", i + 1);
  return name;
}

std::uint64_t ClientWorld::Send(net::Request request, std::string what,
                                std::function<void()> on_ok) {
  return Send(std::move(request), std::move(what),
              [on_ok = std::move(on_ok)](const net::Response& answer) {
                if (answer.status == 200) on_ok();
              });
}

net::Request PostRequest(const std::string& route, std::string body) {
  net::Request request;
  request.method = "POST";
  request.path = "/api/dtmsvr/" + route;
  request.target = request.path;
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = std::move(body);
  request.remote_address = "127.0.0.1";
  return request;
}

Client Client::Make(TransType type, std::string gid, ClientWorld& world, int max_branches) {
  Client c;
  c.type = type;
  c.gid = std::move(gid);
  c.max_branches = max_branches;
  if (type == TransType::kTcc) return c;
  c.steps = 1 + static_cast<int>(world.Pick(3));
  if (type == TransType::kWorkflow) {
    // A third succeed; a third have a step refused by the business; in a third the handler
    // fails after a step (both roll back what ran).
    const int ending = static_cast<int>(world.Pick(3));
    if (ending > 0) {
      c.fails_at = static_cast<int>(world.Pick(static_cast<std::uint64_t>(c.steps)));
      c.refused = ending == 1;
    }
    const nlohmann::json custom = {{"name", "transfer"},
                                   {"data", Base64Encode(R"({"amount":30})")}};
    nlohmann::json body = {{"gid", c.gid},
                           {"trans_type", "workflow"},
                           {"custom_data", custom.dump()},
                           {"query_prepared", SimulatedUrl("wf/resume")}};
    // Some may time out (a step recorded late fails, and the workflow rolls back); half are
    // resumed every 5 s instead of every second.
    if (world.Chance(30)) body["timeout_to_fail"] = 10 + world.Pick(111);
    if (world.Chance(50)) body["retry_interval"] = 5;
    c.body = body.dump();
    return c;
  }
  nlohmann::json body = {{"gid", c.gid}, {"trans_type", ToString(type)}};
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json payloads = nlohmann::json::array();
  for (int i = 0; i < c.steps; ++i) {
    if (type == TransType::kSaga) {
      steps.push_back({{"action", SimulatedUrl("saga/action", i)},
                       {"compensate", SimulatedUrl("saga/compensate", i)}});
    } else {
      steps.push_back({{"action", SimulatedUrl("msg", i)}});
    }
    payloads.push_back(R"({"amount":)" + std::to_string(10 * (i + 1)) + "}");
  }
  body["steps"] = steps;
  body["payloads"] = payloads;
  if (type == TransType::kSaga) {
    c.concurrent = world.Chance(25);
    if (c.concurrent) body["concurrent"] = true;
    // Half the sagas may time out (then they compensate); a quarter give up on an action
    // after 2 failed calls in a row.
    if (world.Chance(50)) body["timeout_to_fail"] = 2 + world.Pick(19);
    if (world.Chance(25)) body["retry_limit"] = 2;
  } else {
    c.direct = world.Chance(25);
    if (!c.direct) {
      body["query_prepared"] = SimulatedUrl("query");
      body["timeout_to_fail"] = 1 + world.Pick(20);  // the back-check comes after it
    }
  }
  c.body = body.dump();
  return c;
}

void Client::Act(ClientWorld& world) {
  switch (type) {
    case TransType::kSaga:
      return ActSaga(world);
    case TransType::kMsg:
      return ActMsg(world);
    case TransType::kWorkflow:
      return ActWorkflow(world);
    default:
      return ActTcc(world);
  }
}

void Client::ActTcc(ClientWorld& world) {
  const int what = static_cast<int>(world.Pick(100));
  if (!prepare_ok && what < 50) {
    const std::uint64_t timeout = 1 + world.Pick(20);
    const nlohmann::json body = {{"gid", gid}, {"trans_type", "tcc"}, {"timeout_to_fail", timeout}};
    world.Send(PostRequest("prepare", body.dump()),
               gid + " prepare timeout_to_fail=" + std::to_string(timeout) + "s",
               [this] { prepare_ok = true; });
  } else if (what < 40) {
    // registerBranch: a new branch, or (a duplicate) one already sent.
    std::string branch;
    if (next_branch > 0 && (next_branch >= max_branches || world.Chance(25))) {
      branch = BranchName(static_cast<int>(world.Pick(static_cast<std::uint64_t>(next_branch))));
    } else {
      branch = BranchName(next_branch++);
    }
    const nlohmann::json body = {{"gid", gid},
                                 {"branch_id", branch},
                                 {"trans_type", "tcc"},
                                 {"data", R"({"amount":30})"},
                                 {"confirm", SimulatedUrl("tcc/confirm")},
                                 {"cancel", SimulatedUrl("tcc/cancel")}};
    world.Send(PostRequest("registerBranch", body.dump()), gid + " registerBranch " + branch,
               [this, branch] { registered_ok.insert(branch); });
  } else if (what < 60) {
    // Try at the participant, only for a branch whose registration was answered OK, and
    // only before a submit was sent (TCC's contract).
    std::vector<std::string> candidates(registered_ok.begin(), registered_ok.end());
    if (candidates.empty() || submit_sent) {
      world.Log("client " + gid +
                " try: " + (submit_sent ? "submitted already" : "nothing registered"));
      return;
    }
    const std::string& branch = candidates[world.Pick(candidates.size())];
    const bool ok = world.participant().Try(gid, branch);
    world.Log("client " + gid + " try " + branch + (ok ? ": reserved" : ": refused (cancelled)"));
    if (ok) tried.insert(branch);
  } else if (what < 85) {
    submit_sent = true;
    const nlohmann::json body = {{"gid", gid}, {"trans_type", "tcc"}};
    world.Send(PostRequest("submit", body.dump()), gid + " submit", [this] { submit_ok = true; });
  } else {
    const nlohmann::json body = {{"gid", gid}, {"trans_type", "tcc"}};
    world.Send(PostRequest("abort", body.dump()), gid + " abort", [this] { abort_ok = true; });
  }
}

void Client::ActSaga(ClientWorld& world) {
  // A saga is one submit; the client repeats it (identically) at random moments.
  if (submit_sent && !world.Chance(30)) {
    world.Log("client " + gid + " waits (saga submitted)");
    return;
  }
  submit_sent = true;
  world.Send(PostRequest("submit", body), gid + " submit " + Short(body),
             [this] { submit_ok = true; });
}

void Client::ActMsg(ClientWorld& world) {
  Participant& participant = world.participant();
  if (direct) {
    // The sender's business is done before a message goes out without a prepare.
    if (submit_sent && !world.Chance(30)) {
      world.Log("client " + gid + " waits (message submitted)");
      return;
    }
    participant.CommitLocal(gid);
    submit_sent = true;
    world.Send(PostRequest("submit", body), gid + " submit (no prepare) " + Short(body),
               [this] { submit_ok = true; });
    return;
  }
  // DTM's DoAndSubmit: prepare, run the local transaction, then submit (or abort if it
  // failed). The back-check may roll the local transaction back first.
  if (!prepare_ok || world.Chance(10)) {
    world.Send(PostRequest("prepare", body), gid + " prepare " + Short(body),
               [this] { prepare_ok = true; });
    return;
  }
  switch (participant.LocalState(gid)) {
    case Participant::Local::kOpen:
      if (world.Chance(70)) {
        const bool ok = participant.CommitLocal(gid);
        world.Log("client " + gid + " local transaction: " +
                  (ok ? "committed" : "refused (rolled back by the back-check)"));
      } else {
        participant.RollBackLocal(gid);
        world.Log("client " + gid + " local transaction: rolled back");
      }
      return;
    case Participant::Local::kCommitted:
      submit_sent = true;
      world.Send(PostRequest("submit", body), gid + " submit", [this] { submit_ok = true; });
      return;
    case Participant::Local::kRolledBack: {
      const nlohmann::json abort = {{"gid", gid}, {"trans_type", "msg"}};
      world.Send(PostRequest("abort", abort.dump()), gid + " abort", [this] { abort_ok = true; });
      return;
    }
  }
}

bool Client::Ready(ClientWorld& world) const {
  if (type != TransType::kWorkflow || finished) return false;
  if (!run.running) return runs == 0 || world.participant().Resumes(gid) > resumes_seen;
  return !(run.waiting && world.InFlight(run.ticket));
}

bool Client::MustAct(const ClientWorld& world) const {
  if (type != TransType::kWorkflow || finished || runs == 0) return false;
  return !(run.running && run.waiting && world.InFlight(run.ticket));
}

// One action of the workflow's client: start a run (its prepareWorkflow), call a step or a
// phase 2 at the participant, record it, or submit; or stop the run, as a service restarts.
void Client::ActWorkflow(ClientWorld& world) {
  const std::string who = "client " + gid;
  if (finished) {
    world.Log(who + " done (its workflow " + Str(submitted) + ")");
    return;
  }
  if (!run.running) {
    // A run that stopped is followed by another when settled resumes the workflow, or when
    // its caller asks again; the first one, when it is called.
    const bool resumed = world.participant().Resumes(gid) > resumes_seen;
    if (runs > 0 && !resumed && !world.settling() && !world.Chance(30)) {
      world.Log(who + " waits for a resume");
      return;
    }
    run = WorkflowRun{};
    run.running = true;
    ++runs;
    world.Log(who + " starts run " + std::to_string(runs) + (resumed ? " (resumed)" : ""));
    SendInRun(world, PostRequest("prepareWorkflow", body),
              gid + " prepareWorkflow (run " + std::to_string(runs) + ")",
              [this, &world](const net::Response& answer) { ReadLog(world, answer); });
    return;
  }
  if (run.waiting) {
    if (!world.InFlight(run.ticket)) {
      StopRun(world, "its request was lost with its instance (its connection broke)");
    } else if (!world.settling() && world.Chance(10)) {
      // The request may still be applied: a record of it may land after the next run read
      // the log, and that run calls the step again (the participant's barrier absorbs it).
      if (run.recording) abandoned.insert(*run.recording);
      StopRun(world, "gives up on its unanswered request (its service restarts)");
    } else {
      world.Log(who + " waits for an answer");
    }
    return;
  }
  // Its service restarts between two actions now and then; once more after faults stop (a
  // client fault, bounded: the next run replays a longer log, and still ends).
  if (world.settling() ? restarts_left > 0 && world.Chance(20) : world.Chance(3)) {
    if (world.settling()) --restarts_left;
    StopRun(world, "stops between two actions (its service restarts)");
    return;
  }
  StepWorkflow(world);
}

// The handler replayed over what the run knows (DTM's and the SDK's order): the first step
// not recorded is called; once the handler ends, phase 2 runs in reverse over what ran
// (commit the steps that succeeded, or roll back every step that ran, a failed one included);
// then the submit.
void Client::StepWorkflow(ClientWorld& world) {
  const std::string who = "client " + gid;
  if (run.to_record) return SendRecord(world);
  Participant& participant = world.participant();
  std::vector<int> commits;
  std::vector<int> rollbacks;
  std::string failure;
  for (int i = 0; i < steps && failure.empty(); ++i) {
    const std::string branch = BranchName(i);
    const auto recorded = run.log.find({branch, BranchOp::kAction});
    if (recorded == run.log.end()) {
      if (run.timed_out.count(i)) {
        rollbacks.push_back(i);
        failure = "step " + branch + " recorded past timeout_to_fail";
        break;
      }
      const bool refuse = refused && fails_at == i;
      const Answer answer = participant.Deliver(gid, branch, BranchOp::kAction,
                                                SimulatedUrl("wf/action", i), refuse, false);
      const bool ok = answer == Answer::kSuccess;
      world.Log(who + " calls step " + branch + "'s action: " + (ok ? "done" : "refused"));
      run.to_record = WorkflowRun::Record{
          branch, BranchOp::kAction, ok ? BranchStatus::kSucceed : BranchStatus::kFailed,
          ok ? "moved " + std::to_string(10 * (i + 1)) : "refused: insufficient funds"};
      return;
    }
    rollbacks.push_back(i);
    if (recorded->second == BranchStatus::kFailed) {
      failure = "step " + branch + " failed";
    } else {
      commits.push_back(i);
      if (fails_at == i && !refused) failure = "the handler failed after step " + branch;
    }
  }
  const bool failed = !failure.empty();
  const BranchOp op = failed ? BranchOp::kRollback : BranchOp::kCommit;
  const std::vector<int>& phase2 = failed ? rollbacks : commits;
  for (auto i = phase2.rbegin(); i != phase2.rend(); ++i) {
    const std::string branch = BranchName(*i);
    if (run.log.count({branch, op})) continue;
    participant.Deliver(gid, branch, op, SimulatedUrl(failed ? "wf/rollback" : "wf/commit", *i),
                        false, false);
    world.Log(who + " calls step " + branch + "'s " + Str(op) + ": done");
    run.to_record = WorkflowRun::Record{branch, op, BranchStatus::kSucceed, Str(op) + " done"};
    return;
  }
  const GlobalStatus end = failed ? GlobalStatus::kFailed : GlobalStatus::kSucceed;
  const nlohmann::json extra = {{"status", Str(end)},
                                {"rollback_reason", failure},
                                {"result", failed ? "" : Base64Encode(kWorkflowResult)}};
  const nlohmann::json submit = {{"gid", gid}, {"trans_type", "workflow"}, {"req_extra", extra}};
  SendInRun(world, PostRequest("submit", submit.dump()), gid + " submit " + Str(end),
            [this, &world, end](const net::Response& answer) {
              if (answer.status != 200) {
                StopRun(world, "its submit was answered " + std::to_string(answer.status));
                return;
              }
              submit_ok = true;
              submitted = end;
              finished = true;
              run.running = false;
            });
}

void Client::StopRun(ClientWorld& world, const std::string& why) {
  run.running = false;
  resumes_seen = world.participant().Resumes(gid);
  world.Log("client " + gid + " run " + std::to_string(runs) + " stops: " + why);
}

// Sends a request of the current run; `then` runs on its answer, unless the run stopped
// meanwhile (a later run may be running: it knows nothing of this request).
void Client::SendInRun(ClientWorld& world, net::Request request, std::string what,
                       std::function<void(const net::Response&)> then) {
  run.waiting = true;
  const int number = runs;
  run.ticket = world.Send(std::move(request), std::move(what),
                          [this, number, then = std::move(then)](const net::Response& answer) {
                            if (number != runs || !run.running) return;
                            run.waiting = false;
                            then(answer);
                            run.recording.reset();
                          });
}

// prepareWorkflow's answer: how the workflow stands, and its step log.
void Client::ReadLog(ClientWorld& world, const net::Response& answer) {
  if (answer.status != 200) {
    StopRun(world, "prepareWorkflow was answered " + std::to_string(answer.status));
    return;
  }
  prepare_ok = true;
  const nlohmann::json read = nlohmann::json::parse(answer.body, nullptr, false);
  const nlohmann::json transaction =
      read.is_object() ? read.value("transaction", nlohmann::json::object()) : nlohmann::json();
  const std::optional<GlobalStatus> status =
      transaction.is_object() ? ParseGlobalStatus(transaction.value("status", std::string()))
                              : std::nullopt;
  if (!status || (*status != GlobalStatus::kPrepared && *status != GlobalStatus::kSucceed &&
                  *status != GlobalStatus::kFailed)) {
    StopRun(world, "prepareWorkflow answered what it cannot read");
    return;
  }
  if (*status != GlobalStatus::kPrepared) {
    // It ended (a submit of an earlier run was applied): the run returns how.
    finished = true;
    submitted = *status;
    run.running = false;
    world.Log("client " + gid + " reads that its workflow ended " + Str(*status));
    return;
  }
  for (const nlohmann::json& step : read.value("progresses", nlohmann::json::array())) {
    const auto op = ParseBranchOp(step.value("op", std::string()));
    const auto done = ParseBranchStatus(step.value("status", std::string()));
    if (!op || !done) {
      StopRun(world, "prepareWorkflow answered a step it cannot read");
      return;
    }
    run.log[{step.value("branch_id", std::string()), *op}] = *done;
  }
  run.log_read = true;
}

void Client::SendRecord(ClientWorld& world) {
  const WorkflowRun::Record record = *run.to_record;
  const nlohmann::json body = {
      {"gid", gid},           {"trans_type", "workflow"},     {"branch_id", record.branch},
      {"op", Str(record.op)}, {"status", Str(record.status)}, {"data", record.data}};
  run.recording = std::pair{record.branch, record.op};
  SendInRun(
      world, PostRequest("registerBranch", body.dump()),
      gid + " registerBranch " + record.branch + " " + Str(record.op) + " " + Str(record.status),
      [this, &world, record](const net::Response& answer) {
        if (answer.status == 200) {
          run.log[{record.branch, record.op}] = record.status;
          recorded_ok.insert({record.branch, record.op, record.status});
          run.to_record.reset();
        } else if (answer.status == 409 && record.op == BranchOp::kAction &&
                   answer.body.find(kWorkflowTimedOut) != std::string::npos) {
          // Past timeout_to_fail: the step ran but is not recorded; the workflow fails.
          run.timed_out.insert(std::stoi(record.branch) - 1);
          run.to_record.reset();
        } else {
          StopRun(world, "its record was answered " + std::to_string(answer.status));
        }
      });
}

}  // namespace settle::simulation
