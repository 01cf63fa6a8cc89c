// Participant outages against the real settled binary: a participant killed and started again
// under load, one that times out, one that answers 503, a probe that succeeds while other
// calls still fail, and settled itself killed (SIGKILL) while a circuit is open and while
// the transactions it held back are being released. Whatever settled does inside, the outcome
// must hold: every saga ends succeed, each branch's effect is applied once by a participant
// that keeps its state like a barrier, and no call a saga needs is lost.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "fault_proxy.h"
#include "file_text.h"
#include "final_status.h"
#include "json_client.h"
#include "metrics_sample.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::Fault;
using testing::FaultProxy;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ReceivedCall;
using testing::ScriptedAnswer;
using testing::SettledProcess;

// Short retries and probes: the first probe after 1 s, then at most 300 ms apart; three host
// failures open a circuit. A stuck threshold only a circuit gone wrong would reach.
std::vector<std::string> QuickArgs(std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--retry-interval",    "50ms", "--retry-max",   "200ms",
                                   "--circuit-failures",  "3",    "--stuck-after", "1000",
                                   "--circuit-probe-max", "300ms"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string HostOf(int port) { return "http://127.0.0.1:" + std::to_string(port); }

// The value of `name`{host="..."} in settled's metrics, or -1 when it has no such series (or
// did not answer).
double CircuitSample(JsonClient& client, const std::string& name, int host_port) {
  return testing::SampleValue(client.Get("/api/metrics").body,
                              name + "{host=\"" + HostOf(host_port) + "\"}");
}

bool WaitForOpens(JsonClient& client, int host_port, double opens) {
  return testing::Eventually(
      [&] { return CircuitSample(client, "settle_circuit_opens_total", host_port) >= opens; });
}

bool WaitForClosed(JsonClient& client, int host_port) {
  return testing::Eventually(
      [&] { return CircuitSample(client, "settle_circuit_state", host_port) == 0; });
}

std::vector<std::string> Gids(const std::string& prefix, int count) {
  std::vector<std::string> gids;
  for (int i = 0; i < count; ++i) gids.push_back(prefix + std::to_string(i));
  return gids;
}

json Saga(const std::string& gid, const std::string& action_url) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", action_url}}}},
          {"payloads", {R"({"amount":1})"}}};
}

// Submits one single-step saga per gid, from `threads` clients at once; returns how many
// submits got a 200. `between` (if set) runs in each thread after its first half of the
// gids, before the second.
std::size_t SubmitConcurrently(int settled_port, const std::vector<std::string>& gids,
                               const std::string& action_url, int threads,
                               const std::function<void()>& between = nullptr) {
  std::atomic<std::size_t> accepted{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] {
      JsonClient client(settled_port);
      std::vector<std::string> mine;
      for (std::size_t i = t; i < gids.size(); i += threads) mine.push_back(gids[i]);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (between && i == mine.size() / 2) between();
        if (client.PostJson("/api/settle/submit", Saga(mine[i], action_url)).status == 200) {
          ++accepted;
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  return accepted;
}

std::size_t Submit(JsonClient& client, const std::vector<std::string>& gids,
                   const std::string& action_url) {
  std::size_t accepted = 0;
  for (const auto& gid : gids) {
    if (client.PostJson("/api/settle/submit", Saga(gid, action_url)).status == 200) ++accepted;
  }
  return accepted;
}

void CheckAllSucceed(JsonClient& client, const std::vector<std::string>& gids,
                     milliseconds timeout = seconds(30)) {
  const auto deadline = steady_clock::now() + timeout;
  for (const auto& gid : gids) {
    INFO(gid);
    CHECK(testing::WaitForFinalStatus(client, gid, deadline) == "succeed");
  }
}

std::size_t CountWithStatus(JsonClient& client, const std::vector<std::string>& gids,
                            const std::string& status) {
  std::size_t count = 0;
  for (const auto& gid : gids) count += testing::StatusOf(client, gid) == status ? 1 : 0;
  return count;
}

// A participant's own state, which outlives its server (a participant restarted keeps its
// database): how many times each branch operation ("gid:branch:op") ran and answered
// SUCCESS, and the operations applied, each once, as a barrier in the participant's database
// would apply it however often it runs. While it is unavailable it answers 503 (no FAILURE)
// and runs nothing.
class Ledger {
 public:
  ParticipantServer::Handler Handler() {
    return [this](const ReceivedCall& call) {
      const std::string key =
          Value(call, "gid") + ":" + Value(call, "branch_id") + ":" + Value(call, "op");
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[key];
      if (unavailable_) return ScriptedAnswer{503, R"({"message":"overloaded"})"};
      ++executions_[key];
      applied_.insert(key);
      return ScriptedAnswer{};
    };
  }

  void SetUnavailable(bool unavailable) {
    std::lock_guard<std::mutex> lock(mu_);
    unavailable_ = unavailable;
  }

  std::size_t Calls(const std::string& key) const { return Get(calls_, key); }
  std::size_t Executions(const std::string& key) const { return Get(executions_, key); }
  std::size_t TotalCalls() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t total = 0;
    for (const auto& [key, count] : calls_) total += count;
    return total;
  }
  std::set<std::string> Applied() const {
    std::lock_guard<std::mutex> lock(mu_);
    return applied_;
  }

 private:
  static std::string Value(const ReceivedCall& call, const std::string& name) {
    auto it = call.query.find(name);
    return it == call.query.end() ? "?" : it->second;
  }
  std::size_t Get(const std::map<std::string, std::size_t>& counts, const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }

  mutable std::mutex mu_;
  bool unavailable_ = false;
  std::map<std::string, std::size_t> calls_;
  std::map<std::string, std::size_t> executions_;
  std::set<std::string> applied_;
};

std::string ActionKey(const std::string& gid) { return gid + ":01:action"; }

// Every saga's action applied, and nothing applied that no saga asked for.
void CheckAppliedOnce(const Ledger& ledger, const std::vector<std::string>& gids) {
  std::set<std::string> expected;
  for (const auto& gid : gids) expected.insert(ActionKey(gid));
  CHECK(ledger.Applied() == expected);
}

// Where no answer could be lost (no crash, no timeout), each action ran exactly once.
void CheckRanOnce(const Ledger& ledger, const std::vector<std::string>& gids) {
  for (const auto& gid : gids) {
    INFO(gid);
    CHECK(ledger.Executions(ActionKey(gid)) == 1);
  }
}

TEST_CASE(
    "a participant killed under load and started again on its port: the circuit opens, and "
    "every saga succeeds once it is back",
    "[process][circuit]") {
  testing::TempDir dir;
  Ledger ledger;
  auto participant = std::make_unique<ParticipantServer>();
  participant->SetHandler("/action", ledger.Handler());
  const int port = participant->port();
  const std::string url = participant->Url("/action");
  SettledProcess settled(dir.File("settle.db"), QuickArgs());
  JsonClient client(settled.port());

  // Four clients submit 200 sagas; each submits its second half only once the participant
  // is gone, so that sagas arrive both before and during the outage.
  const std::vector<std::string> gids = Gids("load-", 200);
  std::mutex mu;
  std::condition_variable changed;
  bool down = false;
  std::thread killer([&] {
    participant->WaitForCalls("/action", 20, seconds(20));
    participant.reset();  // connections close; new ones are refused
    std::lock_guard<std::mutex> lock(mu);
    down = true;
    changed.notify_all();
  });
  const std::size_t accepted = SubmitConcurrently(settled.port(), gids, url, 4, [&] {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait_for(lock, seconds(30), [&] { return down; });
  });
  killer.join();
  REQUIRE(accepted == gids.size());
  REQUIRE(down);

  REQUIRE(WaitForOpens(client, port, 1));
  CHECK(CircuitSample(client, "settle_circuit_state", port) >= 1);  // open or probing
  CHECK(CountWithStatus(client, gids, "failed") == 0);

  participant = std::make_unique<ParticipantServer>(
      port, [&](ParticipantServer& p) { p.SetHandler("/action", ledger.Handler()); });
  CheckAllSucceed(client, gids);
  CHECK(WaitForClosed(client, port));
  CHECK(CircuitSample(client, "settle_circuit_opens_total", port) >= 1);
  CheckAppliedOnce(ledger, gids);
  for (const auto& gid : gids) {
    INFO(gid);
    CHECK(ledger.Calls(ActionKey(gid)) >= 1);
  }
  CHECK(settled.Terminate() == 0);
}

TEST_CASE(
    "a participant that accepts calls and never answers in time opens the circuit on "
    "timeouts, and once it answers, every saga succeeds",
    "[process][circuit]") {
  testing::TempDir dir;
  Ledger ledger;
  ParticipantServer participant;
  participant.SetHandler("/action", ledger.Handler());
  FaultProxy hanging(participant.port());
  hanging.AddRule({"/action", Fault::kHold, 0, -1});
  SettledProcess settled(dir.File("settle.db"), QuickArgs({"--branch-timeout", "200ms"}));
  JsonClient client(settled.port());

  const std::vector<std::string> gids = Gids("slow-", 30);
  REQUIRE(Submit(client, gids, hanging.Url("/action")) == gids.size());
  REQUIRE(WaitForOpens(client, hanging.port(), 1));
  CHECK(testing::WaitForFileToContain(settled.log_path(),
                                      "circuit for " + HostOf(hanging.port()) +
                                          " open after 3 consecutive failures (last: \"timed out",
                                      steady_clock::now() + seconds(5)));
  // The calls that timed out are still held, unanswered: none reached the participant.
  CHECK(hanging.Held("/action") >= 3);
  CHECK(ledger.TotalCalls() == 0);
  CHECK(CountWithStatus(client, gids, "failed") == 0);

  // The participant answers again; the calls it got too late reach it now and run (their
  // answers go to connections settled has given up on), as a slow participant's would.
  hanging.ClearRules();
  hanging.Release("/action");
  CheckAllSucceed(client, gids);
  CHECK(WaitForClosed(client, hanging.port()));
  CheckAppliedOnce(ledger, gids);
  CHECK(testing::WaitForFileToContain(settled.log_path(),
                                      "circuit for " + HostOf(hanging.port()) + " closed after",
                                      steady_clock::now() + seconds(5)));
  CHECK(settled.Terminate() == 0);
}

TEST_CASE(
    "a participant host that answers only 503 opens the circuit without failing a saga, and "
    "once it heals, every saga succeeds",
    "[process][circuit]") {
  testing::TempDir dir;
  Ledger ledger;
  ledger.SetUnavailable(true);
  ParticipantServer participant;
  participant.SetHandler("/action", ledger.Handler());
  SettledProcess settled(dir.File("settle.db"), QuickArgs());
  JsonClient client(settled.port());

  const std::vector<std::string> gids = Gids("busy-", 30);
  REQUIRE(Submit(client, gids, participant.Url("/action")) == gids.size());
  REQUIRE(WaitForOpens(client, participant.port(), 1));
  CHECK(testing::WaitForFileToContain(settled.log_path(),
                                      "circuit for " + HostOf(participant.port()) +
                                          " open after 3 consecutive failures (last: \"HTTP 503",
                                      steady_clock::now() + seconds(5)));
  // While it is open only probes come: far fewer calls than sagas.
  const std::size_t calls_when_open = ledger.TotalCalls();
  REQUIRE(participant.WaitForCalls("/action", calls_when_open + 2));
  CHECK(CountWithStatus(client, gids, "failed") == 0);
  CHECK(CountWithStatus(client, gids, "succeed") == 0);

  ledger.SetUnavailable(false);
  CheckAllSucceed(client, gids);
  CHECK(WaitForClosed(client, participant.port()));
  CheckAppliedOnce(ledger, gids);
  CheckRanOnce(ledger, gids);  // the 503s ran nothing
  CHECK(settled.Terminate() == 0);
}

TEST_CASE(
    "a probe that succeeds while other calls to the host still fail closes the circuit, the "
    "failing calls open it again, and all succeed once the host heals",
    "[process][circuit]") {
  testing::TempDir dir;
  Ledger ledger;
  ParticipantServer participant;
  participant.SetHandler("/a", ledger.Handler());
  participant.SetHandler("/b", ledger.Handler());
  FaultProxy host(participant.port());  // one host, two paths
  host.AddRule({"/a", Fault::kDropRequest, 0, -1});
  SettledProcess settled(dir.File("settle.db"), QuickArgs());
  JsonClient client(settled.port());

  const std::vector<std::string> on_a = Gids("a-", 20);
  REQUIRE(Submit(client, on_a, host.Url("/a")) == on_a.size());
  REQUIRE(WaitForOpens(client, host.port(), 1));
  CHECK(CircuitSample(client, "settle_circuit_opens_total", host.port()) == 1);
  // Sagas on the other path of the same host wait with the others.
  const std::vector<std::string> on_b = Gids("b-", 10);
  REQUIRE(Submit(client, on_b, host.Url("/b")) == on_b.size());

  // Whichever call is the probe succeeds: /b always, and the next /a once; the /a calls
  // after it fail again. So the circuit closes, and once the /b sagas are done the failing
  // /a calls open it again.
  host.ClearRules();
  host.AddRule({"/a", Fault::kDropRequest, 1, -1});
  REQUIRE(testing::WaitForFileToContain(settled.log_path(),
                                        "circuit for " + HostOf(host.port()) + " closed after",
                                        steady_clock::now() + seconds(15)));
  REQUIRE(WaitForOpens(client, host.port(), 2));
  CHECK(CountWithStatus(client, on_a, "succeed") <= 1);
  CHECK(CountWithStatus(client, on_a, "failed") == 0);

  host.ClearRules();
  CheckAllSucceed(client, on_a);
  CheckAllSucceed(client, on_b);
  CHECK(WaitForClosed(client, host.port()));
  std::vector<std::string> all = on_a;
  all.insert(all.end(), on_b.begin(), on_b.end());
  CheckAppliedOnce(ledger, all);
  CheckRanOnce(ledger, all);  // dropped calls never reached the participant
  CHECK(settled.Terminate() == 0);
}

// The world of the kill -9 cases: the participant's ledger behind a proxy that drops every
// /action call (the host is down), and settled on a fresh database, to be killed and started
// again on it.
struct DownHostWorld {
  DownHostWorld() {
    participant.SetHandler("/action", ledger.Handler());
    down.AddRule({"/action", Fault::kDropRequest, 0, -1});
  }
  std::unique_ptr<SettledProcess> StartSettled(const std::string& log_name) {
    return std::make_unique<SettledProcess>(db, QuickArgs(), 0, dir.File(log_name));
  }

  testing::TempDir dir;
  Ledger ledger;
  ParticipantServer participant;
  FaultProxy down{participant.port()};
  const std::string db = dir.File("settle.db");
};

TEST_CASE(
    "settled killed while a circuit is open, started again with the participant still down, "
    "opens it again and loses no saga, and all succeed once the participant is back",
    "[process][circuit]") {
  DownHostWorld world;
  Ledger& ledger = world.ledger;
  FaultProxy& down = world.down;
  auto settled = world.StartSettled("first.log");

  const std::vector<std::string> gids = Gids("wait-", 50);
  {
    JsonClient client(settled->port());
    REQUIRE(Submit(client, gids, down.Url("/action")) == gids.size());
    REQUIRE(WaitForOpens(client, down.port(), 1));
    REQUIRE(testing::Eventually(
        [&] { return CircuitSample(client, "settle_circuit_waiting", down.port()) >= 1; }));
  }
  settled->Kill();

  // The circuit was in memory only: the new process finds the host down by itself.
  settled = world.StartSettled("second.log");
  JsonClient client(settled->port());
  REQUIRE(WaitForOpens(client, down.port(), 1));
  for (const auto& gid : gids) {
    INFO(gid);
    CHECK(testing::StatusOf(client, gid) == "submitted");
  }
  CHECK(ledger.TotalCalls() == 0);

  down.ClearRules();
  CheckAllSucceed(client, gids);
  CHECK(WaitForClosed(client, down.port()));
  CheckAppliedOnce(ledger, gids);
  CheckRanOnce(ledger, gids);
  CHECK(settled->Terminate() == 0);
}

TEST_CASE(
    "settled killed while the sagas an outage held back are being released, some finished "
    "and some calls in flight: after a restart all succeed, each action applied once",
    "[process][circuit]") {
  DownHostWorld world;
  Ledger& ledger = world.ledger;
  ParticipantServer& participant = world.participant;
  FaultProxy& down = world.down;
  auto settled = world.StartSettled("first.log");

  const std::vector<std::string> gids = Gids("release-", 300);
  std::set<std::string> done_before_kill;
  {
    JsonClient client(settled->port());
    REQUIRE(SubmitConcurrently(settled->port(), gids, down.Url("/action"), 4) == gids.size());
    REQUIRE(WaitForOpens(client, down.port(), 1));

    // The participant comes back, answers its first 100 calls (the probe among them) and
    // holds the answers to the rest: settled is mid-release, with calls in flight.
    participant.HoldAfter(100);
    down.ClearRules();
    REQUIRE(participant.WaitForCalls("/action", 100, seconds(20)));
    REQUIRE(participant.WaitForHeld(1, seconds(20)));
    // The sagas seen succeed now were stored so before the kill.
    REQUIRE(testing::Eventually([&] {
      for (const auto& gid : gids) {
        if (testing::StatusOf(client, gid) == "succeed") done_before_kill.insert(gid);
      }
      return !done_before_kill.empty();
    }));
    settled->Kill();
  }
  const std::size_t held_at_kill = participant.Held();
  WARN("killed with " << held_at_kill << " calls in flight");
  participant.Release();  // their answers go to a coordinator that is gone

  settled = world.StartSettled("second.log");
  JsonClient client(settled->port());
  // At most the 100 answered calls finished their sagas.
  CHECK(done_before_kill.size() <= 100);

  CheckAllSucceed(client, gids);
  CheckAppliedOnce(ledger, gids);
  CHECK(ledger.TotalCalls() >= gids.size());
  for (const auto& gid : done_before_kill) {
    // A saga stored as succeed is never called again.
    INFO(gid);
    CHECK(ledger.Executions(ActionKey(gid)) == 1);
  }
  CHECK(settled->Terminate() == 0);
}

}  // namespace
}  // namespace settle
