#include "simulator.h"

#include "forwarding_store.h"

#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "fake_clock.h"
#include "settle/calls/branch_caller.h"
#include "settle/drive/async_store.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/drive/gid_generator.h"
#include "settle/drive/scheduler.h"
#include "settle/drive/transaction_driver.h"
#include "settle/net/asio.h"
#include "settle/net/async.h"
#include "settle/storage/sqlite_store.h"

namespace settle::simulation {

std::string SimulationResult::Report() const {
  std::ostringstream out;
  out << "simulation seed " << seed << " (replay: scripts/simulate --seed " << seed
      << (queued_commits ? " --queued-commits" : "") << ")\n";
  out << "failure: " << (failure.empty() ? "none" : failure) << "\n";
  out << "history (" << history.size() << " lines):\n";
  for (const std::string& line : history) out << "  " << line << "\n";
  return out.str();
}

namespace {

using coordinator::BranchCall;
using coordinator::BranchOutcome;

std::string Str(GlobalStatus s) { return std::string(ToString(s)); }
std::string Str(BranchOp op) { return std::string(ToString(op)); }

// Forwards every verb to the SQLite store but leaves CommitAsync to Store's default, which
// calls Commit inline: a commit completes on the simulator's thread, inside the handler that
// asked for it (AsyncStore then posts the coroutine's resumption to its executor, where the
// simulator runs it as one more handler). SqliteStore's own CommitAsync would complete on its
// writer thread, racing the simulator.
class InlineStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
};

// A commit asked for and not yet applied (SimulationSettings::queued_commits).
struct QueuedCommit {
  storage::WriteBatch batch;
  std::function<void(Status)> done;
};

// Opt-in (SimulationSettings::queued_commits): CommitAsync queues the batch, and the
// simulator applies the oldest one as a step of its own, on its own thread, as the store's
// writer thread applies commits in their order. Between a handler that read and queued its
// commit and that commit, other handlers run and other commits apply: the window of the old
// timeout/registration race.
class QueuedStore final : public InlineStore {
 public:
  QueuedStore(storage::Store& inner, std::deque<QueuedCommit>& queue)
      : InlineStore(inner), queue_(queue) {}
  void CommitAsync(storage::WriteBatch batch, std::function<void(Status)> done) override {
    queue_.push_back({std::move(batch), std::move(done)});
  }

 private:
  std::deque<QueuedCommit>& queue_;
};

// A branch call the driver made that no participant has answered yet.
struct PendingCall {
  BranchCall call;
  std::shared_ptr<struct CallGroup> group;
  std::size_t index = 0;
};

// The calls of one CallAll: the coroutine resumes once every one has an outcome.
struct CallGroup {
  std::vector<std::optional<BranchOutcome>> outcomes;
  std::size_t left = 0;
  std::function<void(std::vector<BranchOutcome>)> done;
};

// The BranchCaller the driver calls through: CallAll suspends its coroutine and leaves the
// calls pending until the simulator answers them, one at a time.
class SimulatedCaller final : public coordinator::BranchCaller {
 public:
  explicit SimulatedCaller(std::vector<PendingCall>& pending) : pending_(pending) {}

  asio::awaitable<std::vector<BranchOutcome>> CallAll(std::vector<BranchCall> calls) override {
    if (calls.empty()) co_return std::vector<BranchOutcome>{};
    co_return co_await net::AwaitCallback<std::vector<BranchOutcome>>([this, &calls](auto done) {
      auto group = std::make_shared<CallGroup>();
      group->outcomes.resize(calls.size());
      group->left = calls.size();
      group->done = std::move(done);
      for (std::size_t i = 0; i < calls.size(); ++i) pending_.push_back({calls[i], group, i});
    });
  }

 private:
  std::vector<PendingCall>& pending_;
};

// Everything a crash loses: the io_context with its handlers and suspended coroutines, the
// coordinator, driver and scheduler. Only the database file survives.
struct Process {
  std::unique_ptr<storage::SqliteStore> sqlite;
  std::deque<QueuedCommit> commits;  // queued_commits only; lost in a crash
  std::unique_ptr<InlineStore> store;
  std::unique_ptr<coordinator::AsyncStore> async_store;
  asio::io_context context;
  std::vector<PendingCall> pending;
  std::unique_ptr<SimulatedCaller> caller;
  std::unique_ptr<coordinator::TransactionDriver> driver;
  std::unique_ptr<coordinator::Scheduler> scheduler;
  std::unique_ptr<coordinator::GidGenerator> gids;
  std::unique_ptr<coordinator::Coordinator> coordinator;
  int client_ops_in_flight = 0;
};

// A participant with its own barrier: per (gid, branch, op) whether it was done, and the
// amount each Try holds until its confirm or cancel.
class Participant {
 public:
  // The client's Try: refused after the branch's cancel (the barrier's rule), idempotent.
  bool Try(const std::string& gid, const std::string& branch, int amount) {
    if (done_.count({gid, branch, BranchOp::kCancel})) return false;
    if (done_.insert({gid, branch, BranchOp::kTry}).second) reserved_[{gid, branch}] = amount;
    return true;
  }
  // The coordinator's confirm or cancel, applied once; a cancel without a Try is a no-op that
  // still blocks a later Try.
  void Apply(const std::string& gid, const std::string& branch, BranchOp op) {
    if (!done_.insert({gid, branch, op}).second) return;
    reserved_.erase({gid, branch});
  }
  bool Done(const std::string& gid, const std::string& branch, BranchOp op) const {
    return done_.count({gid, branch, op}) > 0;
  }
  const std::map<std::pair<std::string, std::string>, int>& reserved() const { return reserved_; }
  std::vector<std::string> Tried(const std::string& gid) const {
    std::vector<std::string> out;
    for (const auto& [g, b, op] : done_) {
      if (g == gid && op == BranchOp::kTry) out.push_back(b);
    }
    return out;
  }

 private:
  std::set<std::tuple<std::string, std::string, BranchOp>> done_;
  std::map<std::pair<std::string, std::string>, int> reserved_;
};

// One TCC client: its gid and what the coordinator acknowledged to it.
struct Client {
  std::string gid;
  bool prepared_ok = false;
  std::set<std::string> registered_ok;  // registerBranch answered OK
  std::set<std::string> tried;          // Try done at the participant
  bool submit_sent = false;             // a client Trys only before it submits (TCC's contract)
  bool submit_ok = false;
  bool abort_ok = false;
  int next_branch = 0;
};

class Simulator {
 public:
  Simulator(std::uint64_t seed, std::string dir, const SimulationSettings& settings)
      : settings_(settings), random_(seed), db_path_(std::move(dir) + "/settle.db") {
    result_.seed = seed;
    result_.queued_commits = settings.queued_commits;
    for (int i = 0; i < settings_.clients; ++i) {
      clients_.push_back(Client{"sim-" + std::to_string(i)});
    }
  }

  SimulationResult Run() {
    std::filesystem::remove(db_path_);
    std::filesystem::remove(db_path_ + "-wal");
    std::filesystem::remove(db_path_ + "-shm");
    if (!Open()) return std::move(result_);
    for (int step = 0; step < settings_.steps && result_.ok(); ++step) {
      Step();
      ++result_.steps;
      if (result_.ok()) CheckEveryStep();
    }
    if (result_.ok()) Settle();
    if (result_.ok()) CheckAtEnd();
    Close(/*crash=*/!result_.ok());
    return std::move(result_);
  }

 private:
  std::uint64_t Pick(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(random_);
  }
  bool Chance(int percent) { return static_cast<int>(Pick(100)) < percent; }
  void Log(std::string line) {
    result_.history.push_back("[" + std::to_string(result_.history.size()) +
                              " t=" + std::to_string(ToUnixMillis(clock_.Now()) - kStartMillis) +
                              "ms] " + std::move(line));
  }
  void Fail(std::string why) {
    if (result_.ok()) {
      result_.failure = why;
      Log("INVARIANT BROKEN: " + why);
    }
  }

  bool Open() {
    auto p = std::make_unique<Process>();
    auto sqlite = storage::SqliteStore::Open(db_path_);
    if (!sqlite.ok()) {
      Fail("cannot open " + db_path_ + ": " + sqlite.status().ToString());
      return false;
    }
    p->sqlite = std::move(*sqlite);
    if (settings_.queued_commits) {
      p->store = std::make_unique<QueuedStore>(*p->sqlite, p->commits);
    } else {
      p->store = std::make_unique<InlineStore>(*p->sqlite);
    }
    p->async_store = std::make_unique<coordinator::AsyncStore>(*p->store);
    p->caller = std::make_unique<SimulatedCaller>(p->pending);
    p->driver = std::make_unique<coordinator::TransactionDriver>(
        *p->async_store, *p->caller, clock_,
        coordinator::RetryPolicy(coordinator::RetrySettings{Duration(8000), 1000},
                                 coordinator::RetryPolicy::NoJitter()),
        metrics_);
    p->scheduler =
        std::make_unique<coordinator::Scheduler>(clock_, p->context.get_executor(), *p->driver);
    p->gids = std::make_unique<coordinator::GidGenerator>(clock_);
    p->coordinator =
        std::make_unique<coordinator::Coordinator>(*p->async_store, *p->scheduler, clock_, *p->gids,
                                                   coordinator::CoordinatorSettings{}, metrics_);
    process_ = std::move(p);
    Result<std::size_t> resumed = process_->coordinator->Resume();
    if (!resumed.ok()) {
      Fail("Resume: " + resumed.status().ToString());
      return false;
    }
    return true;
  }

  // crash: the in-memory parts are abandoned, never destroyed (their destructors would wait
  // for passes suspended in calls nobody will answer, or resume coroutines of a dead process):
  // only the SQLite store is closed, as the process's exit would. Otherwise the process has
  // settled and shuts down in order.
  void Close(bool crash) {
    if (!process_) return;
    if (crash || !process_->pending.empty() || process_->client_ops_in_flight > 0 ||
        !process_->commits.empty()) {
      process_->sqlite.reset();
      process_.release();  // deliberately leaked: see above
      return;
    }
    process_->coordinator.reset();
    process_->gids.reset();
    process_->scheduler.reset();
    process_->driver.reset();
    process_.reset();
  }

  bool RunHandler() {
    asio::io_context& context = process_->context;
    if (context.stopped()) context.restart();
    return context.poll_one() > 0;
  }

  void Step() {
    const int kind = static_cast<int>(Pick(100));
    if (kind < 35) {
      if (settings_.queued_commits && !process_->commits.empty() && Chance(30)) {
        ApplyCommit();
      } else if (RunHandler()) {
        Log("run a handler");
      } else {
        Log("run a handler: none ready");
      }
    } else if (kind < 55) {
      AnswerCall(/*faults=*/true);
    } else if (kind < 83) {
      ClientAction();
    } else if (kind < 97) {
      static constexpr std::int64_t kSteps[] = {0, 100, 1000, 3000, 10000};
      const Duration d(kSteps[Pick(5)]);
      clock_.Advance(d);
      const std::size_t started = process_->scheduler->RunOnce();
      Log("advance time " + std::to_string(d.count()) + "ms, RunOnce started " +
          std::to_string(started));
    } else if (result_.crashes < settings_.max_crashes) {
      Crash();
    } else {
      Log("crash: none left");
    }
  }

  // What a batch writes, for the history: "insert g", "g/01/confirm", "g prepared->failed";
  // other ops (preconditions, row updates) are counted.
  static std::string Describe(const storage::WriteBatch& batch) {
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

  // Applies the oldest queued commit and posts its completion.
  void ApplyCommit() {
    QueuedCommit commit = std::move(process_->commits.front());
    process_->commits.pop_front();
    const Status status = process_->sqlite->Commit(commit.batch);
    Log("apply a queued commit [" + Describe(commit.batch) + "]: " + status.ToString());
    commit.done(status);
  }

  void Crash() {
    ++result_.crashes;
    Log("CRASH: lost " + std::to_string(process_->pending.size()) + " pending calls, " +
        std::to_string(process_->commits.size()) + " queued commits and " +
        std::to_string(process_->client_ops_in_flight) + " client operations; restart");
    Close(/*crash=*/true);
    Open();
  }

  // Answers one pending call, chosen by the seed: SUCCESS, FAILURE, an error (retried), or a
  // lost answer (done at the participant, the coordinator never hears).
  void AnswerCall(bool faults) {
    std::vector<PendingCall>& pending = process_->pending;
    if (pending.empty()) {
      Log("answer a call: none pending");
      return;
    }
    const std::size_t i = faults ? Pick(pending.size()) : 0;
    PendingCall call = std::move(pending[i]);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    const BranchCall& c = call.call;
    const int how = faults ? static_cast<int>(Pick(100)) : 0;
    BranchOutcome outcome;
    std::string what;
    if (how < 60) {
      participant_.Apply(c.gid, c.branch_id, c.op);
      outcome = {BranchResult::kSuccess, 200, ""};
      what = "SUCCESS";
    } else if (how < 70) {
      outcome = {BranchResult::kFailure, 409, "HTTP 409: FAILURE"};
      what = "FAILURE (not applied)";
    } else if (how < 85) {
      outcome = {BranchResult::kUnknown, 500, "HTTP 500: boom"};
      what = "error 500 (not applied)";
    } else {
      participant_.Apply(c.gid, c.branch_id, c.op);
      outcome = {BranchResult::kUnknown, 0, "timed out after 3000 ms"};
      what = "answer lost (applied)";
    }
    Log("answer " + c.gid + "/" + c.branch_id + "/" + Str(c.op) + ": " + what);
    CallGroup& group = *call.group;
    group.outcomes[call.index] = outcome;
    if (--group.left == 0) {
      std::vector<BranchOutcome> all;
      for (auto& o : group.outcomes) all.push_back(std::move(*o));
      group.done(std::move(all));  // posts the pass's resumption
    }
  }

  // Spawns a client's operation on the process's context; its answer is recorded when the
  // coroutine ends (never, if the process crashes first).
  void Spawn(const std::string& what, asio::awaitable<Status> op,
             std::function<void(Client&)> on_ok, std::size_t client) {
    Process* p = process_.get();
    ++p->client_ops_in_flight;
    asio::co_spawn(
        p->context, std::move(op),
        [this, p, what, on_ok = std::move(on_ok), client](std::exception_ptr e, Status s) {
          --p->client_ops_in_flight;
          if (e) {
            Fail(what + " threw");
            return;
          }
          Log("client answer: " + what + " -> " + s.ToString());
          if (s.ok()) on_ok(clients_[client]);
        });
  }

  void ClientAction() {
    const std::size_t ci = Pick(clients_.size());
    Client& c = clients_[ci];
    coordinator::Coordinator& coord = *process_->coordinator;
    const int what = static_cast<int>(Pick(100));
    if (!c.prepared_ok && what < 50) {
      coordinator::PrepareRequest r{c.gid, {}};
      r.options.timeout_to_fail = Duration(static_cast<std::int64_t>(1000 + Pick(20) * 1000));
      const std::string line =
          c.gid + " prepare timeout_to_fail=" + std::to_string(r.options.timeout_to_fail->count()) +
          "ms";
      Log("client sends " + line);
      Spawn(
          line, coord.Prepare(std::move(r)), [](Client& cl) { cl.prepared_ok = true; }, ci);
    } else if (what < 40) {
      // registerBranch: a new branch, or (a duplicate) one already sent.
      std::string branch;
      if (c.next_branch > 0 && (c.next_branch >= settings_.max_branches || Chance(25))) {
        branch = BranchName(static_cast<int>(Pick(static_cast<std::uint64_t>(c.next_branch))));
      } else {
        branch = BranchName(c.next_branch++);
      }
      coordinator::RegisterBranchRequest r{c.gid, branch, R"({"amount":30})", "http://p/confirm",
                                           "http://p/cancel"};
      const std::string line = c.gid + " registerBranch " + branch;
      Log("client sends " + line);
      Spawn(
          line, coord.RegisterBranch(std::move(r)),
          [branch](Client& cl) { cl.registered_ok.insert(branch); }, ci);
    } else if (what < 60) {
      // Try at the participant, only for a branch whose registration was answered OK.
      std::vector<std::string> candidates(c.registered_ok.begin(), c.registered_ok.end());
      if (candidates.empty() || c.submit_sent) {
        Log("client " + c.gid +
            " try: " + (c.submit_sent ? "submitted already" : "nothing registered"));
        return;
      }
      const std::string& branch = candidates[Pick(candidates.size())];
      const bool ok = participant_.Try(c.gid, branch, 30);
      Log("client " + c.gid + " try " + branch + (ok ? ": reserved" : ": refused (cancelled)"));
      if (ok) c.tried.insert(branch);
    } else if (what < 85) {
      c.submit_sent = true;
      Log("client sends " + c.gid + " submit");
      Spawn(
          c.gid + " submit", coord.Submit(coordinator::SubmitRequest{c.gid}),
          [](Client& cl) { cl.submit_ok = true; }, ci);
    } else {
      coordinator::AbortRequest r{c.gid, "client abort"};
      Log("client sends " + c.gid + " abort");
      Spawn(
          c.gid + " abort", coord.Abort(std::move(r)), [](Client& cl) { cl.abort_ok = true; }, ci);
    }
  }

  static std::string BranchName(int i) {
    char name[16];
    std::snprintf(name, sizeof name, "%02d", i + 1);
    return name;
  }

  std::optional<storage::Transaction> Load(const std::string& gid) {
    auto tx = process_->sqlite->Load(gid);
    if (!tx.ok()) {
      Fail("Load " + gid + ": " + tx.status().ToString());
      return std::nullopt;
    }
    return std::move(*tx);
  }

  static bool Allowed(GlobalStatus from, GlobalStatus to) {
    if (from == to) return true;
    switch (from) {
      case GlobalStatus::kPrepared:
        return to == GlobalStatus::kSubmitted || to == GlobalStatus::kAborting ||
               to == GlobalStatus::kFailed;
      case GlobalStatus::kSubmitted:
        return to == GlobalStatus::kSucceed;
      case GlobalStatus::kAborting:
        return to == GlobalStatus::kFailed;
      default:
        return false;
    }
  }

  // Status only forward; nothing acknowledged lost; the participant never both confirmed and
  // cancelled a branch.
  void CheckEveryStep() {
    for (const Client& c : clients_) {
      std::optional<storage::Transaction> tx = Load(c.gid);
      if (!result_.ok()) return;
      const bool stored = tx.has_value();
      if (!stored) {
        if (last_status_.count(c.gid)) Fail(c.gid + " was stored and is gone");
        if (c.prepared_ok) Fail(c.gid + ": prepare answered OK but nothing is stored");
        if (!c.registered_ok.empty()) Fail(c.gid + ": a branch answered OK but no transaction");
        continue;
      }
      const storage::Transaction& t = *tx;
      const GlobalStatus now = t.global.status;
      auto last = last_status_.find(c.gid);
      if (last != last_status_.end() && !Allowed(last->second, now)) {
        Fail(c.gid + ": status moved " + Str(last->second) + " -> " + Str(now));
      }
      if (last != last_status_.end() && last->second != now) {
        Log("store: " + c.gid + " " + Str(last->second) + " -> " + Str(now));
      }
      last_status_[c.gid] = now;
      for (const std::string& b : c.registered_ok) {
        bool confirm = false, cancel = false;
        for (const auto& row : t.branches) {
          if (row.branch_id != b) continue;
          confirm |= row.op == BranchOp::kConfirm;
          cancel |= row.op == BranchOp::kCancel;
        }
        if (!confirm || !cancel) Fail(c.gid + "/" + b + ": registered OK but its rows are missing");
      }
      if (c.submit_ok && now != GlobalStatus::kSubmitted && now != GlobalStatus::kSucceed) {
        Fail(c.gid + ": submit answered OK but the status is " + Str(now));
      }
      if (c.abort_ok && now != GlobalStatus::kAborting && now != GlobalStatus::kFailed) {
        Fail(c.gid + ": abort answered OK but the status is " + Str(now));
      }
      for (const auto& row : t.branches) {
        if (participant_.Done(c.gid, row.branch_id, BranchOp::kConfirm) &&
            participant_.Done(c.gid, row.branch_id, BranchOp::kCancel)) {
          Fail(c.gid + "/" + row.branch_id + ": both confirmed and cancelled at the participant");
        }
      }
    }
  }

  bool Quiescent() {
    if (!process_->pending.empty() || process_->client_ops_in_flight > 0 ||
        !process_->commits.empty()) {
      return false;
    }
    auto unfinished = process_->sqlite->ListUnfinished();
    return unfinished.ok() && unfinished->empty();
  }

  // Faults stop: every handler runs, every call succeeds, time moves until nothing is left.
  void Settle() {
    Log("-- faults stop: settling --");
    for (int i = 0; i < settings_.settle_limit && result_.ok(); ++i) {
      if (RunHandler()) {
        CheckEveryStep();
        continue;
      }
      if (!process_->commits.empty()) {
        ApplyCommit();
        CheckEveryStep();
        continue;
      }
      if (!process_->pending.empty()) {
        AnswerCall(/*faults=*/false);
        CheckEveryStep();
        continue;
      }
      if (Quiescent()) {
        Log("settled");
        return;
      }
      clock_.Advance(Duration(5000));
      process_->scheduler->RunOnce();
      Log("advance time 5000ms (settling)");
      CheckEveryStep();
    }
    if (result_.ok())
      Fail("not settled after " + std::to_string(settings_.settle_limit) + " steps");
  }

  // Each TCC ended with its registered branches all confirmed or all cancelled at the
  // participant, every Try confirmed or cancelled, nothing reserved.
  void CheckAtEnd() {
    for (const Client& c : clients_) {
      std::optional<storage::Transaction> tx = Load(c.gid);
      if (!result_.ok()) return;
      if (!tx) {
        if (!participant_.Tried(c.gid).empty()) Fail(c.gid + ": tried but never stored");
        continue;
      }
      const storage::Transaction& t = *tx;
      const GlobalStatus s = t.global.status;
      if (s != GlobalStatus::kSucceed && s != GlobalStatus::kFailed) {
        Fail(c.gid + ": ended " + Str(s));
        continue;
      }
      const BranchOp want = s == GlobalStatus::kSucceed ? BranchOp::kConfirm : BranchOp::kCancel;
      std::set<std::string> branches;
      for (const auto& row : t.branches) branches.insert(row.branch_id);
      for (const std::string& b : participant_.Tried(c.gid)) {
        if (!branches.count(b)) Fail(c.gid + "/" + b + ": tried at the participant, not stored");
      }
      for (const std::string& b : branches) {
        if (!participant_.Done(c.gid, b, want)) {
          Fail(c.gid + " is " + Str(s) + " but its registered branch " + b + " never got its " +
               Str(want) + " at the participant");
        }
      }
    }
    for (const auto& [key, amount] : participant_.reserved()) {
      Fail(key.first + "/" + key.second + ": " + std::to_string(amount) +
           " still reserved at the participant");
    }
  }

  static constexpr std::int64_t kStartMillis = 1'800'000'000'000;

  SimulationSettings settings_;
  std::mt19937_64 random_;
  std::string db_path_;
  SimulationResult result_;
  testing::FakeClock clock_{FromUnixMillis(kStartMillis)};
  coordinator::CoordinatorMetrics metrics_;
  std::unique_ptr<Process> process_;
  Participant participant_;
  std::vector<Client> clients_;
  std::map<std::string, GlobalStatus> last_status_;
};

}  // namespace

SimulationResult RunSimulation(std::uint64_t seed, const std::string& dir,
                               const SimulationSettings& settings) {
  return Simulator(seed, dir, settings).Run();
}

}  // namespace settle::simulation
