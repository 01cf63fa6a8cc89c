#include "simulator.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "clients.h"
#include "fake_clock.h"
#include "forwarding_store.h"
#include "invariants.h"
#include "participant.h"
#include "settle/storage/sqlite_store.h"
#include "simulated_leases.h"
#include "simulated_process.h"

namespace settle::simulation {

std::string SimulationResult::Report() const {
  std::ostringstream out;
  out << "simulation seed " << seed << " (replay: scripts/simulate --seed " << seed
      << (queued_commits ? " --queued-commits" : "")
      << (instances > 1 ? " --instances " + std::to_string(instances) : "") << ")\n";
  out << "failure: " << (failure.empty() ? "none" : failure) << "\n";
  out << "history (" << history.size() << " lines):\n";
  for (const std::string& line : history) out << "  " << line << "\n";
  return out.str();
}

namespace {

using engine::BranchCall;
using engine::BranchOutcome;

std::string Str(GlobalStatus s) { return std::string(ToString(s)); }
std::string Str(BranchOp op) { return std::string(ToString(op)); }
std::string Name(const BranchCall& c) { return c.gid + "/" + c.branch_id + "/" + Str(c.op); }

// A request's coroutine: the request lives in its frame while the API answers it.
asio::awaitable<net::Response> Serve(api::ApiServer& api, net::Request request) {
  co_return co_await api.Handle(request);
}

// What a batch writes, for the history: "insert g", "g/01/confirm", "g prepared->failed";
// other ops (preconditions, row updates) are counted.
std::string Describe(const storage::WriteBatch& batch) {
  std::string out;
  int other = 0;
  for (const storage::WriteOp& op : batch.ops()) {
    std::string part;
    if (const auto* g = std::get_if<storage::InsertGlobal>(&op)) {
      part = "insert " + g->record.gid;
    } else if (const auto* b = std::get_if<storage::InsertBranch>(&op)) {
      part = b->record.gid + "/" + b->record.branch_id + "/" + Str(b->record.op);
    } else if (const auto* u = std::get_if<storage::UpdateGlobal>(&op)) {
      part = u->record.gid + " " + Str(u->expected) + "->" + Str(u->record.status);
    } else {
      ++other;
      continue;
    }
    out += (out.empty() ? "" : ", ") + part;
  }
  if (other > 0) out += (out.empty() ? "" : ", ") + std::to_string(other) + " other ops";
  return out;
}

// The database as the processes and the simulator reach it: counts the commits asked of it,
// so that the invariants read the transactions again only when a commit may have changed them.
class CountingStore final : public testing::ForwardingStore {
 public:
  CountingStore(storage::Store& inner, std::uint64_t& commits)
      : ForwardingStore(inner), commits_(commits) {}
  Status Commit(const storage::WriteBatch& batch) override {
    ++commits_;
    return ForwardingStore::Commit(batch);
  }

 private:
  std::uint64_t& commits_;
};

class Simulator final : public ClientWorld {
 public:
  Simulator(std::uint64_t seed, std::string dir, const SimulationSettings& settings)
      : settings_(settings), random_(seed), db_path_(std::move(dir) + "/settle.db") {
    result_.seed = seed;
    result_.queued_commits = settings.queued_commits;
    result_.instances = settings.instances;
    int n = 0;
    const auto add = [&](TransType type, int count) {
      for (int i = 0; i < count; ++i) {
        clients_.push_back(
            Client::Make(type, "sim-" + std::string(ToString(type)) + "-" + std::to_string(n++),
                         *this, settings_.max_branches));
      }
    };
    add(TransType::kTcc, settings_.tcc_clients);
    add(TransType::kSaga, settings_.saga_clients);
    add(TransType::kMsg, settings_.msg_clients);
    add(TransType::kWorkflow, settings_.workflow_clients);
  }

  SimulationResult Run() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path_ + suffix);
    if (!OpenDatabase()) return std::move(result_);
    processes_.resize(static_cast<std::size_t>(std::max(1, settings_.instances)));
    for (std::size_t i = 0; i < processes_.size() && result_.ok(); ++i) Start(i);
    for (int step = 0; step < settings_.steps && result_.ok(); ++step) {
      Step();
      ++result_.steps;
      if (result_.ok()) CheckStep();
    }
    if (result_.ok()) Settle();
    if (result_.ok()) Fail(invariants_.CheckEnd(*store_));
    if (result_.ok()) CountEndings();
    for (auto& process : processes_) EndProcess(std::move(process), /*crash=*/!result_.ok());
    store_.reset();
    database_.reset();
    return std::move(result_);
  }

  // ClientWorld
  std::uint64_t Pick(std::uint64_t n) override {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(random_);
  }
  bool Chance(int percent) override { return static_cast<int>(Pick(100)) < percent; }
  void Log(std::string line) override {
    result_.history.push_back("[" + std::to_string(result_.history.size()) +
                              " t=" + std::to_string(ToUnixMillis(clock_.Now()) - kStartMillis) +
                              "ms] " + std::move(line));
  }
  Participant& participant() override { return participant_; }

  // Spawns the request on one instance's context (drawn by the seed); its answer is recorded
  // when the coroutine ends (never, if that instance crashes first).
  using ClientWorld::Send;
  std::uint64_t Send(net::Request request, std::string what,
                     std::function<void(const net::Response&)> on_answer) override {
    Process* p = processes_[Pick(processes_.size())].get();
    Log("client sends " + what + Where(*p));
    ++p->requests_in_flight;
    const std::uint64_t ticket = ++last_ticket_;
    requests_[ticket] = p;
    asio::co_spawn(p->context, Serve(*p->api, std::move(request)),
                   [this, p, ticket, what, on_answer = std::move(on_answer)](
                       std::exception_ptr e, net::Response response) {
                     --p->requests_in_flight;
                     requests_.erase(ticket);
                     if (e) {
                       Fail(what + " threw");
                       return;
                     }
                     Log("client answer: " + what + " -> " + std::to_string(response.status) + " " +
                         response.body);
                     on_answer(response);
                   });
    return ticket;
  }
  bool InFlight(std::uint64_t ticket) const override { return requests_.count(ticket) > 0; }
  bool settling() const override { return settling_; }

 private:
  void Fail(std::string why) {
    if (result_.ok() && !why.empty()) {
      result_.failure = why;
      Log("INVARIANT BROKEN: " + why);
    }
  }

  // " at b" with several instances, for the history.
  std::string Where(const Process& p) const { return processes_.size() > 1 ? " at " + p.name : ""; }

  void CountEndings() {
    for (const Client& c : clients_) {
      auto tx = database_->Load(c.gid);
      const std::string ending = !tx.ok()           ? "unreadable"
                                 : !tx->has_value() ? "not stored"
                                                    : Str((*tx)->global.status);
      ++result_.endings[std::string(ToString(c.type)) + " " + ending];
    }
  }

  void CheckStep() {
    Fail(invariants_.CheckStep(*store_, commits_,
                               [this](std::string line) { Log(std::move(line)); }));
  }

  // As instance `caller` makes a call: the invariants on the order of calls, and (with
  // several instances) that no other instance still has a call of that transaction running:
  // the lease's fence ends them before another instance may claim it. A workflow's resume
  // overlaps no other resume of it, on any running instance, its own included (one pass of a
  // transaction at a time). A crashed instance's calls are abandoned with it: they are not
  // running, whatever the network still holds of them.
  void CallMade(const std::string& caller, const BranchCall& call) {
    Fail(invariants_.CheckCallMade(call));
    for (const auto& process : processes_) {
      if (process == nullptr) continue;
      for (const PendingCall& other : process->pending) {
        if (other.call.gid != call.gid) continue;
        if (process->name != caller) {
          Fail(caller + " calls " + Name(call) + " while " + process->name + "'s call " +
               Name(other.call) + " is still running");
        } else if (call.op == BranchOp::kResume && other.call.op == BranchOp::kResume) {
          Fail(caller + " resumes " + call.gid + " while its resume made earlier is running");
        }
      }
    }
  }

  bool OpenDatabase() {
    auto sqlite = storage::SqliteStore::Open(db_path_);
    if (!sqlite.ok()) {
      Fail("cannot open " + db_path_ + ": " + sqlite.status().ToString());
      return false;
    }
    database_ = std::move(*sqlite);
    store_ = std::make_unique<CountingStore>(*database_, commits_);
    if (settings_.instances > 1) {
      leases_ = std::make_unique<SimulatedLeases>(*database_, clock_);
    }
    return true;
  }

  // Starts instance `i` (again, after a crash): resumes from the database, or with leases
  // takes its lease and schedules what it may drive.
  void Start(std::size_t i) {
    const std::string name = settings_.instances > 1 ? std::string(1, static_cast<char>('a' + i))
                                                     : std::string("settled");
    auto process = StartProcess(name, *store_, leases_.get(), clock_, settings_.queued_commits,
                                [this, name](const BranchCall& call) { CallMade(name, call); });
    if (!process.ok()) {
      Fail("start " + name + ": " + process.status().ToString());
      return;
    }
    processes_[i] = std::move(*process);
  }

  bool RunHandler(Process& p) {
    if (p.context.stopped()) p.context.restart();
    return p.context.poll_one() > 0;
  }

  Process& AnyProcess() { return *processes_[Pick(processes_.size())]; }

  void Step() {
    // A workflow's client needs some fifteen actions (each step, its phase 2, their records):
    // beside its turns among all clients (where it may wait, or give up), it gets a share of
    // steps of its own, each taken by a workflow client that is ready to move on.
    const int kind = static_cast<int>(Pick(settings_.workflow_clients > 0 ? 112 : 100));
    if (kind >= 100) {
      std::vector<Client*> ready;
      for (Client& client : clients_) {
        if (client.Ready(*this)) ready.push_back(&client);
      }
      if (ready.empty()) {
        Log("a workflow client acts: none ready");
      } else {
        ready[Pick(ready.size())]->Act(*this);
      }
    } else if (kind < 33) {
      Process& p = AnyProcess();
      if (settings_.queued_commits && !p.commits.empty() && Chance(30)) {
        ApplyCommit(p);
      } else if (RunHandler(p)) {
        Log("run a handler" + Where(p));
      } else {
        Log("run a handler" + Where(p) + ": none ready");
      }
    } else if (kind < 53) {
      AnswerCall(/*faults=*/true);
    } else if (kind < 56) {
      DeliverLate();
    } else if (kind < 83) {
      Client& client = clients_[Pick(clients_.size())];
      client.Act(*this);
    } else if (kind < 97) {
      static constexpr std::int64_t kSteps[] = {0, 100, 1000, 3000, 10000};
      AdvanceTime(Duration(kSteps[Pick(5)]), /*faults=*/true);
    } else if (result_.crashes < settings_.max_crashes) {
      Crash(Pick(processes_.size()));
    } else {
      Log("crash: none left");
    }
  }

  // Time passes: calls past their deadline time out, each instance's lease is renewed (or,
  // with faults, sometimes not: a stalled instance) and its scheduler starts what is due.
  void AdvanceTime(Duration d, bool faults) {
    clock_.Advance(d);
    std::string line = "advance time " + std::to_string(d.count()) + "ms";
    ExpireCalls();
    for (auto& p : processes_) {
      if (p->lease != nullptr) {
        if (faults && Chance(20)) {
          line += ", " + p->name + " does not renew";
        } else {
          p->lease->RunOnce();
        }
      }
      const std::size_t started = p->scheduler->RunOnce();
      if (started > 0) line += ", " + p->name + " started " + std::to_string(started);
    }
    Log(line);
  }

  // Applies the oldest queued commit of `p` and posts its completion.
  void ApplyCommit(Process& p) {
    QueuedCommit commit = std::move(p.commits.front());
    p.commits.pop_front();
    const Status status = store_->Commit(commit.batch);
    Log("apply a queued commit" + Where(p) + " [" + Describe(commit.batch) +
        "]: " + status.ToString());
    commit.done(status);
  }

  // Instance `i` dies: its pending calls, queued commits and requests are lost, except that a
  // call already sent may still reach its participant (a late delivery). Alone, it takes the
  // database file with it, reopened as it was left; with others, the database stays.
  void Crash(std::size_t i) {
    ++result_.crashes;
    Process& p = *processes_[i];
    int in_network = 0;
    for (const PendingCall& call : p.pending) {
      if (Chance(50)) {
        late_.push_back(call.call);
        ++in_network;
      }
    }
    Log("CRASH" + Where(p) + ": lost " + std::to_string(p.pending.size()) + " pending calls (" +
        std::to_string(in_network) + " still in the network), " + std::to_string(p.commits.size()) +
        " queued commits and " + std::to_string(p.requests_in_flight) + " requests; restart");
    std::erase_if(requests_, [&p](const auto& request) { return request.second == &p; });
    EndProcess(std::move(processes_[i]), /*crash=*/true);
    if (processes_.size() == 1) {
      store_.reset();
      database_.reset();
      if (!OpenDatabase()) return;
    }
    Start(i);
  }

  // Ends the call at `pending[i]` of `p` with `outcome` (the pass resumes once its group is
  // complete).
  void Complete(Process& p, std::size_t i, const BranchOutcome& outcome) {
    PendingCall call = std::move(p.pending[i]);
    p.pending.erase(p.pending.begin() + static_cast<std::ptrdiff_t>(i));
    if (outcome.result == BranchResult::kSuccess) invariants_.HeardSuccess(call.call);
    CallGroup& group = *call.group;
    group.outcomes[call.index] = outcome;
    if (--group.left == 0) {
      std::vector<BranchOutcome> all;
      for (auto& o : group.outcomes) all.push_back(std::move(*o));
      group.done(std::move(all));  // posts the pass's resumption
    }
  }

  // Calls past their deadline: the caller gives up (an unknown outcome). The request had
  // reached the participant (applied, the answer too slow), is still in the network (a late
  // delivery), or never arrived.
  void ExpireCalls() {
    for (auto& p : processes_) {
      for (std::size_t i = 0; i < p->pending.size();) {
        if (p->pending[i].deadline > clock_.Now()) {
          ++i;
          continue;
        }
        const BranchCall c = p->pending[i].call;
        const int fate = static_cast<int>(Pick(3));
        std::string what = "never arrived";
        if (fate == 0) {
          participant_.Deliver(c.gid, c.branch_id, c.op, c.url, false, false);
          what = "applied, answered too late";
        } else if (fate == 1) {
          late_.push_back(c);
          what = "still in the network";
        }
        Log("call " + Name(c) + Where(*p) + " timed out (" + what + ")");
        Complete(*p, i, {BranchResult::kUnknown, 0, "timed out"});
      }
    }
  }

  // Answers one pending call, chosen by the seed: the participant's own answer, a FAILURE
  // (the business refuses; nothing applied), an error (not applied; retried), or a lost
  // answer (applied; the coordinator never hears). A delivered call may also be duplicated by
  // the network, to arrive again later (DeliverLate).
  void AnswerCall(bool faults) {
    std::vector<std::pair<Process*, std::size_t>> all;
    for (auto& p : processes_) {
      for (std::size_t i = 0; i < p->pending.size(); ++i) all.emplace_back(p.get(), i);
    }
    if (all.empty()) {
      Log("answer a call: none pending");
      return;
    }
    const auto [p, i] = all[faults ? Pick(all.size()) : 0];
    const BranchCall c = p->pending[i].call;
    const int how = faults ? static_cast<int>(Pick(100)) : 0;
    BranchOutcome outcome;
    std::string what;
    if (how >= 60 && how < 75) {
      outcome = {BranchResult::kUnknown, 500, "HTTP 500: boom"};
      what = "error 500 (not applied)";
    } else {
      const bool refuse = how >= 50 && how < 60;
      const bool lost = how >= 75 && how < 90;
      const Answer answer =
          participant_.Deliver(c.gid, c.branch_id, c.op, c.url, refuse, faults && Chance(30));
      if (lost) {
        outcome = {BranchResult::kUnknown, 0, "connection reset"};
        what = "answer lost (applied)";
      } else if (answer == Answer::kSuccess) {
        outcome = {BranchResult::kSuccess, 200, ""};
        what = "SUCCESS";
      } else if (answer == Answer::kFailure) {
        outcome = {BranchResult::kFailure, 409, "HTTP 409: FAILURE"};
        what = refuse ? "FAILURE (refused, not applied)" : "FAILURE";
      } else {
        outcome = {BranchResult::kOngoing, 425, "HTTP 425: ONGOING"};
        what = "ONGOING";
      }
      if (faults && how >= 95) {
        late_.push_back(c);
        what += ", duplicated by the network";
      }
    }
    Log("answer " + Name(c) + Where(*p) + ": " + what);
    Complete(*p, i, outcome);
  }

  // A call the network still holds (a duplicate, or one sent by a process that crashed)
  // reaches its participant; nobody hears the answer.
  void DeliverLate() {
    if (late_.empty()) {
      Log("late delivery: none in the network");
      return;
    }
    const std::size_t i = Pick(late_.size());
    const BranchCall c = std::move(late_[i]);
    late_.erase(late_.begin() + static_cast<std::ptrdiff_t>(i));
    participant_.Deliver(c.gid, c.branch_id, c.op, c.url, /*refuse=*/false,
                         /*still_deciding=*/false);
    Log("late delivery of " + Name(c) + " (answer unheard)");
  }

  bool Quiescent() {
    for (const auto& p : processes_) {
      if (p->Busy()) return false;
    }
    auto unfinished = database_->ListUnfinished();
    return unfinished.ok() && unfinished->empty();
  }

  // One step of settling: the first thing that can move, else time.
  bool SettleStep() {
    for (auto& p : processes_) {
      if (RunHandler(*p)) return true;
    }
    for (auto& p : processes_) {
      if (!p->commits.empty()) {
        ApplyCommit(*p);
        return true;
      }
    }
    for (auto& p : processes_) {
      if (!p->pending.empty()) {
        AnswerCall(/*faults=*/false);
        return true;
      }
    }
    if (!late_.empty()) {
      DeliverLate();
      return true;
    }
    // A workflow's client runs to its end (a workflow waits for its submit, however often it is
    // resumed).
    for (Client& client : clients_) {
      if (client.MustAct(*this)) {
        client.Act(*this);
        return true;
      }
    }
    return false;
  }

  // Faults stop: every handler runs, every call is answered as the participant answers, late
  // deliveries arrive, leases are renewed, time moves until nothing is left.
  void Settle() {
    Log("-- faults stop: settling --");
    settling_ = true;
    for (int i = 0; i < settings_.settle_limit && result_.ok(); ++i) {
      if (!SettleStep()) {
        if (Quiescent()) {
          Log("settled");
          return;
        }
        AdvanceTime(Duration(5000), /*faults=*/false);
      }
      CheckStep();
    }
    if (result_.ok()) {
      Fail("not settled after " + std::to_string(settings_.settle_limit) + " steps");
    }
  }

  static constexpr std::int64_t kStartMillis = 1'800'000'000'000;

  SimulationSettings settings_;
  std::mt19937_64 random_;
  std::string db_path_;
  SimulationResult result_;
  testing::FakeClock clock_{FromUnixMillis(kStartMillis)};
  std::unique_ptr<storage::SqliteStore> database_;
  std::unique_ptr<CountingStore> store_;     // over database_: what everything else uses
  std::uint64_t commits_ = 0;                // asked of store_, over every reopening
  std::unique_ptr<SimulatedLeases> leases_;  // with several instances only
  std::vector<std::unique_ptr<Process>> processes_;
  Participant participant_;
  std::vector<Client> clients_;  // never resized: the clients' callbacks hold their address
  Invariants invariants_{clients_, participant_};
  std::vector<BranchCall> late_;  // calls the network still holds
  bool settling_ = false;
  std::uint64_t last_ticket_ = 0;
  std::map<std::uint64_t, const Process*> requests_;  // the clients' requests in flight
};

}  // namespace

SimulationResult RunSimulation(std::uint64_t seed, const std::string& dir,
                               const SimulationSettings& settings) {
  return Simulator(seed, dir, settings).Run();
}

}  // namespace settle::simulation
