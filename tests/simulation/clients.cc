#include "clients.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <utility>
#include <vector>

namespace settle::simulation {

namespace {

std::string BranchName(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "%02d", i + 1);
  return name;
}

std::string Short(const std::string& body) {
  return body.size() <= 160 ? body : body.substr(0, 157) + "...";
}

}  // namespace

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

}  // namespace settle::simulation
