#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>

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
  // `on_ok` runs if the request is answered 200.
  virtual void Send(net::Request request, std::string what, std::function<void()> on_ok) = 0;
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

  // A client of `type`; the seed draws its shape (steps, options) through `world`.
  static Client Make(TransType type, std::string gid, ClientWorld& world, int max_branches);

  // One action, drawn by the seed, that its protocol allows it now.
  void Act(ClientWorld& world);

 private:
  void ActTcc(ClientWorld& world);
  void ActSaga(ClientWorld& world);
  void ActMsg(ClientWorld& world);
};

// POST /api/dtmsvr/<route> with a JSON body.
net::Request PostRequest(const std::string& route, std::string body);

}  // namespace settle::simulation
