// HostGatedCaller in front of scripted participants, on a fake clock: which calls go out, what
// a held call's outcome says, and who is woken (and when) as a host's gate lets them go.
#include "settle/calls/host_gated_caller.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "scripted_branch_caller.h"

namespace settle::calls {
namespace {

using settle::testing::FakeClock;
using settle::testing::ScriptedBranchCaller;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Gids = std::vector<std::string>;

constexpr const char* kDown = "http://127.0.0.1:9/api/action";
constexpr const char* kDownOrigin = "http://127.0.0.1:9";
constexpr const char* kOther = "http://127.0.0.1:10/api/action";

engine::HostGateSettings Settings(int failures = 2, int max_in_flight = 0,
                                  int release_per_second = 0) {
  engine::HostGateSettings s;
  s.circuit.failures = failures;
  s.circuit.probe_initial = seconds(1);
  s.circuit.probe_max = seconds(4);
  s.max_in_flight = max_in_flight;
  s.release_per_second = release_per_second;
  return s;
}

// A call of transaction `gid` ("g<n>": g1 is the oldest).
engine::BranchCall CallTo(const std::string& url, const std::string& gid) {
  engine::BranchCall call;
  call.gid = gid;
  call.branch_id = "01";
  call.op = BranchOp::kAction;
  call.url = url;
  call.created = TimePoint(seconds(1'000 + std::stoi(gid.substr(1))));
  return call;
}

engine::BranchOutcome Refused() { return {BranchResult::kUnknown, 0, "connection refused"}; }

// Runs CallAll to its end (the scripted caller never suspends).
std::vector<engine::BranchOutcome> Run(HostGatedCaller& caller,
                                       std::vector<engine::BranchCall> calls) {
  asio::io_context io;
  std::vector<engine::BranchOutcome> outcomes;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<engine::BranchOutcome> got = co_await caller.CallAll(std::move(calls));
        outcomes = std::move(got);
      },
      asio::detached);
  io.run();
  return outcomes;
}

engine::BranchOutcome RunOne(HostGatedCaller& caller, const std::string& url,
                             const std::string& gid) {
  return Run(caller, {CallTo(url, gid)}).at(0);
}

struct Fixture {
  explicit Fixture(engine::HostGateSettings settings = Settings())
      : caller(
            participants, clock, settings,
            [this](const Gids& gids) { woken.insert(woken.end(), gids.begin(), gids.end()); },
            [] { return 1.0; }) {}
  FakeClock clock;
  ScriptedBranchCaller participants;
  HostGatedCaller caller;
  Gids woken;
  // Opens kDown's circuit with two refused calls (g1, then g2).
  void OpenDown() {
    participants.Script("01", BranchOp::kAction, {Refused(), Refused()});
    RunOne(caller, kDown, "g1");
    RunOne(caller, kDown, "g2");
    participants.ClearCalls();
  }
  Gids TakeWoken() {
    Gids taken = std::move(woken);
    woken.clear();
    return taken;
  }
};

TEST_CASE("a call to a host whose circuit is open is not made: the transaction is held",
          "[circuit]") {
  Fixture f;
  f.OpenDown();
  f.clock.Advance(milliseconds(300));
  const engine::BranchOutcome held = RunOne(f.caller, kDown, "g3");
  CHECK(f.participants.calls().empty());
  REQUIRE(held.not_called_until);
  // It looks again by itself only after the hold; the gate wakes it before.
  CHECK(*held.not_called_until == f.clock.Now() + f.caller.settings().hold);
  CHECK(held.circuit_open);
  CHECK(held.result == BranchResult::kUnknown);
  const std::vector<HostView> hosts = f.caller.Hosts();
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0].host == kDownOrigin);
  CHECK(hosts[0].state == engine::CircuitState::kOpen);
  CHECK(hosts[0].opens == 1);
  CHECK(hosts[0].waiting == 2);  // g2, whose failure opened it, and g3
  CHECK(hosts[0].next_probe_in == milliseconds(700));
}

TEST_CASE("when a probe is due, a tick wakes the oldest waiting transaction to make it",
          "[circuit]") {
  Fixture f;
  f.OpenDown();
  RunOne(f.caller, kDown, "g3");
  f.caller.Tick();
  CHECK(f.TakeWoken().empty());
  f.clock.Advance(seconds(1));
  f.caller.Tick();
  CHECK(f.TakeWoken() == Gids{"g2"});
  CHECK(f.caller.TakeReleased("g2") == Gids{kDownOrigin});

  f.participants.Script("01", BranchOp::kAction, {Refused()});
  // Two calls in one round to the same host: the first is the probe, the second is held.
  const std::vector<engine::BranchOutcome> outcomes =
      Run(f.caller, {CallTo(kDown, "g2"), CallTo(kDown, "g3")});
  CHECK(f.participants.calls().size() == 1);
  CHECK_FALSE(outcomes[0].not_called_until);
  CHECK(outcomes[0].circuit_open);  // the circuit logs for the host, not the driver
  REQUIRE(outcomes[1].not_called_until);
  // The failed probe doubled the wait: the next probe is woken 2 s later.
  f.clock.Advance(milliseconds(1999));
  f.caller.Tick();
  CHECK(f.TakeWoken().empty());
  f.clock.Advance(milliseconds(1));
  f.caller.Tick();
  CHECK(f.TakeWoken() == Gids{"g2"});
}

TEST_CASE("a probe that succeeds closes the circuit and releases the waiting ones at the rate",
          "[circuit]") {
  Fixture f(Settings(2, 0, 20));  // 20 a second: one a tick of 50 ms
  f.OpenDown();
  for (const char* gid : {"g5", "g4", "g3"}) RunOne(f.caller, kDown, gid);
  f.clock.Advance(seconds(1));
  const engine::BranchOutcome probe = RunOne(f.caller, kDown, "g9");
  CHECK(probe.result == BranchResult::kSuccess);
  CHECK_FALSE(probe.circuit_open);
  CHECK(f.caller.Hosts().at(0).state == engine::CircuitState::kClosed);
  CHECK(f.caller.Hosts().at(0).releasing);
  // Oldest first, one at once and one a tick.
  CHECK(f.TakeWoken() == Gids{"g2"});
  f.caller.Tick();
  CHECK(f.TakeWoken().empty());
  for (const char* gid : {"g3", "g4", "g5"}) {
    f.clock.Advance(HostGatedCaller::kTickEvery);
    f.caller.Tick();
    CHECK(f.TakeWoken() == Gids{gid});
  }
  CHECK_FALSE(f.caller.Hosts().at(0).releasing);
  CHECK(f.caller.Hosts().at(0).waiting == 0);
  // Their passes take the host that released them, once.
  CHECK(f.caller.TakeReleased("g4") == Gids{kDownOrigin});
  CHECK(f.caller.TakeReleased("g4").empty());
  CHECK(f.caller.TakeReleased("g9").empty());  // the probe was not held
  const engine::BranchOutcome after = RunOne(f.caller, kDown, "g4");
  CHECK_FALSE(after.not_called_until);
}

// A participant that holds every answer until the test releases them: calls stay in flight.
class HoldingCaller final : public BranchCaller {
 public:
  explicit HoldingCaller(asio::io_context& io) : io_(io) {}

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override {
    auto timer = std::make_shared<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
    held_.push_back(timer);
    calls_ += calls.size();
    boost::system::error_code ignored;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    co_return std::vector<engine::BranchOutcome>(calls.size(), {BranchResult::kSuccess, 200, ""});
  }
  // Answers the oldest call held.
  void ReleaseOne() {
    held_.front()->cancel();
    held_.erase(held_.begin());
  }
  std::size_t calls() const { return calls_; }

 private:
  asio::io_context& io_;
  std::vector<std::shared_ptr<asio::steady_timer>> held_;
  std::size_t calls_ = 0;
};

TEST_CASE(
    "at the cap of calls in flight a call is held, and each call that ends wakes the oldest "
    "held one",
    "[circuit][cap]") {
  asio::io_context io;
  FakeClock clock;
  HoldingCaller participant(io);
  Gids woken;
  HostGatedCaller caller(
      participant, clock, Settings(5, 2, 0),
      [&](const Gids& gids) { woken.insert(woken.end(), gids.begin(), gids.end()); },
      [] { return 1.0; });
  std::vector<engine::BranchOutcome> outcomes(4);
  const Gids gids = {"g1", "g2", "g4", "g3"};
  for (std::size_t i = 0; i < gids.size(); ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          std::vector<engine::BranchCall> calls{CallTo(kDown, gids[i])};
          std::vector<engine::BranchOutcome> got = co_await caller.CallAll(std::move(calls));
          outcomes[i] = got.at(0);
        },
        asio::detached);
  }
  io.poll();
  CHECK(participant.calls() == 2);
  for (std::size_t i : {2, 3}) {
    INFO(gids[i]);
    REQUIRE(outcomes[i].not_called_until);
    CHECK_FALSE(outcomes[i].circuit_open);
    CHECK_THAT(outcomes[i].detail, Catch::Contains("2 calls to http://127.0.0.1:9 are in flight"));
  }
  HostView host = caller.Hosts().at(0);
  CHECK(host.in_flight == 2);
  CHECK(host.waiting == 2);
  CHECK(host.held_at_cap == 2);

  participant.ReleaseOne();
  io.poll();
  CHECK(outcomes[0].result == BranchResult::kSuccess);
  CHECK(woken == Gids{"g3"});  // the oldest held, not the first
  CHECK(caller.TakeReleased("g3") == Gids{kDownOrigin});
  // Its slot is kept for it: a newcomer is held meanwhile.
  CHECK(Run(caller, {CallTo(kDown, "g7")}).at(0).not_called_until);
  CHECK(caller.Hosts().at(0).in_flight == 1);
  io.restart();
  participant.ReleaseOne();
  io.poll();
  CHECK(woken == Gids{"g3", "g4"});
  CHECK(caller.Hosts().at(0).in_flight == 0);
}

engine::BranchOutcome Succeeded() { return {BranchResult::kSuccess, 200, ""}; }

TEST_CASE(
    "a retry now calls through an open circuit once: a failure leaves the circuit as it was, an "
    "answer closes it",
    "[circuit][retry-now]") {
  Fixture f;
  f.OpenDown();
  CHECK(RunOne(f.caller, kDown, "g3").not_called_until);
  f.clock.Advance(milliseconds(100));
  const TimePoint probe_in = f.clock.Now() + milliseconds(900);
  REQUIRE(f.caller.Hosts().at(0).next_probe_in == milliseconds(900));

  f.caller.RetryNow("g3");
  f.participants.Script("01", BranchOp::kAction, {Refused()});
  const engine::BranchOutcome failed = RunOne(f.caller, kDown, "g3");
  CHECK(f.participants.calls().size() == 1);
  CHECK_FALSE(failed.not_called_until);
  CHECK(failed.circuit_open);
  // The circuit is as it was: open, its probe when it was due; g3 waits for it again.
  const std::vector<HostView> hosts = f.caller.Hosts();
  CHECK(hosts.at(0).state == engine::CircuitState::kOpen);
  CHECK(f.clock.Now() + hosts.at(0).next_probe_in == probe_in);
  CHECK(f.caller.Holds("g3"));
  // The retry now was for that pass only: g3's next call is held.
  CHECK(RunOne(f.caller, kDown, "g3").not_called_until);
  CHECK(f.participants.calls().size() == 1);

  f.caller.RetryNow("g3");
  f.participants.Script("01", BranchOp::kAction, {Succeeded()});
  CHECK(RunOne(f.caller, kDown, "g3").result == BranchResult::kSuccess);
  CHECK(f.participants.calls().size() == 2);
  CHECK(f.caller.Hosts().at(0).state == engine::CircuitState::kClosed);
}

TEST_CASE("a retry now that its pass does not use within kRetryNowFor lapses",
          "[circuit][retry-now]") {
  engine::HostGateSettings settings = Settings();
  settings.circuit.probe_initial = settings.circuit.probe_max = HostGates::kRetryNowFor * 2;
  Fixture f(settings);
  f.OpenDown();
  f.caller.RetryNow("g3");
  f.clock.Advance(HostGates::kRetryNowFor);
  CHECK(RunOne(f.caller, kDown, "g3").not_called_until);
  CHECK(f.participants.calls().empty());
}

TEST_CASE(
    "a host's retry now wakes its oldest waiting transaction to call it at once, and unknown "
    "and idle hosts are refused",
    "[circuit][retry-now]") {
  Fixture f(Settings(2, 0, 1));  // released one a second once the circuit closes
  CHECK(f.caller.RetryHost(kDownOrigin).status().code() == StatusCode::kNotFound);
  f.OpenDown();
  // g2's failure opened it: g2 waits; g3 and g4 are held.
  RunOne(f.caller, kDown, "g3");
  RunOne(f.caller, kDown, "g4");
  const std::optional<HeldView> held = f.caller.HeldBy("g3");
  REQUIRE(held);
  CHECK(held->host == kDownOrigin);
  CHECK(held->reason == "circuit_open");
  CHECK(held->next_try_at == f.clock.Now() + seconds(1));
  CHECK_FALSE(f.caller.HeldBy("g9"));

  const Result<std::string> probed = f.caller.RetryHost(kDownOrigin);
  REQUIRE(probed.ok());
  CHECK(*probed == "g2");
  CHECK(f.TakeWoken() == Gids{"g2"});
  CHECK(f.caller.TakeReleased("g2") == Gids{kDownOrigin});
  f.participants.Script("01", BranchOp::kAction, {Succeeded()});
  CHECK(RunOne(f.caller, kDown, "g2").result == BranchResult::kSuccess);
  CHECK(f.participants.calls().size() == 1);
  CHECK(f.caller.Hosts().at(0).state == engine::CircuitState::kClosed);
  // The others are released now (g3 at once, g4 in a second); once none waits there is
  // nothing to retry.
  CHECK(f.TakeWoken() == Gids{"g3"});
  REQUIRE(f.caller.HeldBy("g4"));
  CHECK(f.caller.HeldBy("g4")->reason == "releasing");
  CHECK_FALSE(f.caller.HeldBy("g4")->next_try_at);
  f.caller.Forget("g4");
  CHECK_FALSE(f.caller.Holds("g4"));
  CHECK(f.caller.Hosts().at(0).waiting == 0);
  CHECK(f.caller.RetryHost(kDownOrigin).status().code() == StatusCode::kConflict);
}

TEST_CASE("each host has its own gate", "[circuit]") {
  Fixture f;
  f.OpenDown();
  const std::vector<engine::BranchOutcome> outcomes =
      Run(f.caller, {CallTo(kDown, "g3"), CallTo(kOther, "g3")});
  CHECK(outcomes[0].not_called_until);
  CHECK_FALSE(outcomes[1].not_called_until);
  CHECK(outcomes[1].result == BranchResult::kSuccess);
  REQUIRE(f.participants.calls().size() == 1);
  CHECK(f.participants.calls()[0].url == kOther);
}

TEST_CASE("FAILURE and ONGOING answers keep a circuit closed", "[circuit]") {
  Fixture f;
  f.participants.Script(
      "01", BranchOp::kAction,
      {Refused(), settle::testing::Failure(), Refused(), settle::testing::Ongoing(), Refused()});
  for (int i = 1; i <= 5; ++i) {
    CHECK_FALSE(RunOne(f.caller, kDown, "g" + std::to_string(i)).not_called_until);
  }
  CHECK(f.caller.Hosts().at(0).state == engine::CircuitState::kClosed);
  CHECK(f.caller.Hosts().at(0).opens == 0);
}

TEST_CASE("with no circuits and no cap every call goes straight out", "[circuit]") {
  FakeClock clock;
  ScriptedBranchCaller participants;
  HostGatedCaller caller(participants, clock, Settings(0, 0), HostGatedCaller::OnWake());
  participants.Script("01", BranchOp::kAction, std::vector<engine::BranchOutcome>(10, Refused()));
  for (int i = 0; i < 10; ++i) CHECK_FALSE(RunOne(caller, kDown, "g1").not_called_until);
  CHECK(participants.calls().size() == 10);
  CHECK(caller.Hosts().empty());
}

TEST_CASE("a call its caller will not send passes no gate, and opens no circuit",
          "[circuit][protocol_keys]") {
  Fixture f;  // two failures in a row open a circuit
  engine::BranchCall query = CallTo(std::string(kDown) + "?gid=VICTIM", "g1");
  engine::BranchCall header = CallTo(kDown, "g2");
  header.headers = {{"dtm-gid", "VICTIM"}};
  // Their caller answers "not sent: ...", an error with no answer, as a refused connection is.
  f.participants.Script("01", BranchOp::kAction, {Refused(), Refused(), Refused(), Refused()});
  for (int i = 0; i < 2; ++i) {
    CHECK_FALSE(Run(f.caller, {query}).at(0).not_called_until);
    CHECK_FALSE(Run(f.caller, {header}).at(0).not_called_until);
  }
  CHECK(f.participants.calls().size() == 4);
  CHECK(f.caller.Hosts().empty());
  // The host's own calls still count: two refused ones open its circuit.
  f.participants.Script("01", BranchOp::kAction, {Refused(), Refused()});
  RunOne(f.caller, kDown, "g3");
  RunOne(f.caller, kDown, "g4");
  REQUIRE(f.caller.Hosts().size() == 1);
  CHECK(f.caller.Hosts()[0].state == engine::CircuitState::kOpen);
}

TEST_CASE("a call whose URL does not parse has no gate", "[circuit]") {
  Fixture f;
  const engine::BranchOutcome outcome = RunOne(f.caller, "not a url", "g1");
  CHECK_FALSE(outcome.not_called_until);
  CHECK(f.participants.calls().size() == 1);
  CHECK(f.caller.Hosts().empty());
}

// "http://h<n>.example:8080/api/action": participant host n.
std::string HostUrl(int n) { return "http://h" + std::to_string(n) + ".example:8080/api/action"; }
std::string HostOrigin(int n) { return "http://h" + std::to_string(n) + ".example:8080"; }

TEST_CASE("a host name's case, a path and a query do not make another gate", "[circuit][bounds]") {
  Fixture f;
  RunOne(f.caller, "http://H1.Example:8080/a", "g1");
  RunOne(f.caller, "http://h1.example:8080/b?x=1", "g2");
  RunOne(f.caller, "HTTP://h1.EXAMPLE:8080/c", "g3");
  const std::vector<HostView> hosts = f.caller.Hosts();
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0].host == HostOrigin(1));
}

TEST_CASE("hosts beyond --max-hosts share the overflow gate: never more gates than the cap",
          "[circuit][bounds]") {
  engine::HostGateSettings settings = Settings();
  settings.max_hosts = 4;
  Fixture f(settings);
  for (int n = 0; n < 1000; ++n) RunOne(f.caller, HostUrl(n), "g" + std::to_string(n + 1));
  CHECK(f.participants.calls().size() == 1000);
  const std::vector<HostView> hosts = f.caller.Hosts();
  REQUIRE(hosts.size() == 4);
  // The first three have their own; every later one is "other".
  CHECK(hosts[0].host == HostOrigin(0));
  CHECK(hosts[1].host == HostOrigin(1));
  CHECK(hosts[2].host == HostOrigin(2));
  CHECK(hosts[3].host == HostGatedCaller::kOverflowHost);
}

TEST_CASE("the overflow gate holds and wakes transactions for the hosts it stands for",
          "[circuit][bounds]") {
  engine::HostGateSettings settings = Settings();
  settings.max_hosts = 1;  // every host is "other"
  Fixture f(settings);
  // Two refused calls to one host open the shared circuit.
  f.participants.Script("01", BranchOp::kAction, {Refused(), Refused()});
  RunOne(f.caller, HostUrl(1), "g1");
  RunOne(f.caller, HostUrl(1), "g2");
  REQUIRE(f.caller.Hosts().size() == 1);
  CHECK(f.caller.Hosts()[0].state == engine::CircuitState::kOpen);
  // A call to another host beyond the cap waits for the shared circuit.
  const engine::BranchOutcome held = RunOne(f.caller, HostUrl(2), "g3");
  CHECK(held.not_called_until);
  CHECK(f.caller.Holds("g3"));
  // The probe wakes the oldest, g2, and its pass is told the host its calls were bound for
  // (its rows to that host become due), not "other".
  f.clock.Advance(seconds(1));
  f.caller.Tick();
  CHECK(f.TakeWoken() == Gids{"g2"});
  CHECK(f.caller.TakeReleased("g2") == Gids{HostOrigin(1)});
  // The probe succeeds: the circuit closes and g3 is released, with its own host.
  f.participants.ClearCalls();
  RunOne(f.caller, HostUrl(1), "g2");
  f.caller.Tick();
  CHECK(f.TakeWoken() == Gids{"g3"});
  CHECK(f.caller.TakeReleased("g3") == Gids{HostOrigin(2)});
}

TEST_CASE("a gate idle for idle_after is forgotten, and one that holds transactions is kept",
          "[circuit][bounds]") {
  engine::HostGateSettings settings = Settings();
  settings.idle_after = std::chrono::minutes(10);
  Fixture f(settings);
  f.OpenDown();                    // g2 waits for kDown's circuit
  RunOne(f.caller, kOther, "g5");  // kOther: one call, then nothing
  for (int n = 0; n < 100; ++n) RunOne(f.caller, HostUrl(n), "g" + std::to_string(n + 10));
  REQUIRE(f.caller.Hosts().size() == 102);
  f.caller.Tick();
  CHECK(f.caller.Hosts().size() == 102);  // nothing is idle yet

  // Just before idle_after nothing goes; at it, every gate but kDown's (which holds g2).
  f.clock.Advance(std::chrono::minutes(10) - milliseconds(1));
  f.caller.Tick();
  CHECK(f.caller.Hosts().size() == 102);
  f.clock.Advance(HostGatedCaller::kPruneEvery);
  // kDown's probes keep being due; its waiting transaction is woken and held again.
  f.caller.Tick();
  const std::vector<HostView> hosts = f.caller.Hosts();
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0].host == kDownOrigin);
  CHECK(f.caller.pruned() == 101);
  // A forgotten host comes back with a fresh gate when it is called again.
  RunOne(f.caller, kOther, "g6");
  CHECK(f.caller.Hosts().size() == 2);
}

}  // namespace
}  // namespace settle::calls
