// Circuits per participant host, through an in-process settled and real sockets: a host that
// is down gets probes, not one call per transaction, and its transactions count no failures
// while they wait, shown stuck (waiting on a broken host) until it is back; a host that
// answers is never cut off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "eventually.h"
#include "fault_proxy.h"
#include "in_process_settled.h"
#include "metrics_sample.h"
#include "participant_server.h"

namespace settle {
namespace {

using testing::SampleValue;

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::Fault;
using testing::FaultProxy;
using testing::FaultRule;
using testing::InProcessSettled;
using testing::ParticipantServer;

constexpr int kThreshold = 3;

// Quick probes (200 ms, then 400 ms), and a stuck threshold that only a circuit gone wrong
// would reach in these tests.
void QuickCircuits(app::ServerConfig& config) {
  config.hosts.circuit.failures = kThreshold;
  config.hosts.circuit.probe_initial = Duration(200);
  config.hosts.circuit.probe_max = Duration(400);
  config.retry.stuck_after = 10;
}

std::string HostOf(int port) { return "http://127.0.0.1:" + std::to_string(port); }

json Saga(const std::string& gid, const std::string& action, const std::string& compensate) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", action}, {"compensate", compensate}}}},
          {"payloads", {R"({"amount":30})"}}};
}

// Scrapes /api/metrics until `series` satisfies `done`, or 10 s pass.
bool WaitForSample(InProcessSettled& s, const std::string& series,
                   const std::function<bool(double)>& done) {
  return testing::Eventually(
      [&] { return done(SampleValue(s.client().Get("/api/metrics").body, series)); },
      std::chrono::seconds(10), milliseconds(10));
}

std::string CircuitSeries(const std::string& name, int port) {
  return name + "{host=\"" + HostOf(port) + "\"}";
}

TEST_CASE(
    "while a participant host is down only probes reach it, its sagas neither fail nor stick, "
    "and all succeed once it is back",
    "[http][circuit]") {
  ParticipantServer participant;
  FaultProxy down(participant.port());
  down.AddRule({"/action", Fault::kDropRequest, 0, -1});
  ParticipantServer healthy;
  InProcessSettled s(QuickCircuits);

  constexpr int kSagas = 20;
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "down-" + std::to_string(i);
    REQUIRE(s.Call("submit", Saga(gid, down.Url("/action"), down.Url("/compensate"))).status ==
            200);
  }
  REQUIRE(WaitForSample(s, CircuitSeries("settle_circuit_opens_total", down.port()),
                        [](double v) { return v == 1; }));
  // Every saga but a probe's has been refused once: their first calls are over.
  REQUIRE(WaitForSample(s, CircuitSeries("settle_circuit_waiting", down.port()),
                        [](double v) { return v >= kSagas - 1; }));
  const std::size_t seen_when_open = down.Seen("/action");
  const auto open_since = steady_clock::now();

  // A healthy participant on another port is not held up.
  for (int i = 0; i < 5; ++i) {
    const std::string gid = "healthy-" + std::to_string(i);
    json saga = Saga(gid, healthy.Url("/action"), healthy.Url("/compensate"));
    saga["wait_result"] = true;
    REQUIRE(s.Call("submit", saga).status == 200);
    CHECK(s.StatusOf(gid) == "succeed");
  }
  CHECK(healthy.CountCalls("/action") == 5);

  // Five more calls reach the down host only as probes, 400 ms apart (jittered by 20%): four
  // waits of 320 ms or more (three if a first call was still on its way). Twenty sagas
  // retrying on their own at 50 to 400 ms would make twenty calls in 400 ms.
  REQUIRE(down.WaitForSeen("/action", seen_when_open + 5));
  CHECK(steady_clock::now() - open_since >= milliseconds(700));

  // Only the probes were failed attempts, failures stay few; every saga the host holds is
  // stuck (all but, at most, the one whose probe just came back and is not held again yet).
  int failures = 0;
  int stuck = 0;
  for (int i = 0; i < kSagas; ++i) {
    const json q = s.Query("down-" + std::to_string(i));
    REQUIRE(q["transaction"].is_object());
    CHECK(q["transaction"]["status"] == "submitted");
    if (q["transaction"]["stuck"] == true) ++stuck;
    for (const json& b : q["branches"]) {
      if (b["op"] == "action") failures += b["failures"].get<int>();
    }
  }
  const std::size_t seen_before_back = down.Seen("/action");
  CHECK(failures <= static_cast<int>(seen_before_back));
  CHECK(failures < kSagas + 10);
  CHECK(stuck >= kSagas - 1);

  // Back: a probe closes the circuit, and the sagas it kept waiting resume at once.
  down.ClearRules();
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "down-" + std::to_string(i);
    INFO(gid);
    CHECK(s.WaitForStatus(gid, "succeed"));
  }
  CHECK(down.Seen("/action") <= seen_before_back + kSagas + 1);
  const std::string m = s.client().Get("/api/metrics").body;
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_state", down.port())) == 0);
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_opens_total", down.port())) == 1);
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_waiting", down.port())) == 0);
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_opens_total", healthy.port())) == 0);
  CHECK(SampleValue(m, "settle_transactions_stuck{type=\"saga\"}") == 0);
}

TEST_CASE("a participant answering FAILURE does not open its host's circuit", "[http][circuit]") {
  ParticipantServer p;
  p.SetDefault("/action", {409, R"({"dtm_result":"FAILURE"})"});
  InProcessSettled s(QuickCircuits);
  for (int i = 0; i < 3 * kThreshold; ++i) {
    const std::string gid = "refused-" + std::to_string(i);
    json saga = Saga(gid, p.Url("/action"), p.Url("/compensate"));
    saga["wait_result"] = true;
    // wait_result: a saga that ends failed is answered 409.
    REQUIRE(s.Call("submit", saga).status == 409);
    CHECK(s.StatusOf(gid) == "failed");
  }
  CHECK(p.CountCalls("/action") == 3 * kThreshold);
  const std::string m = s.client().Get("/api/metrics").body;
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_opens_total", p.port())) == 0);
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_state", p.port())) == 0);
}

TEST_CASE("a host failing only with 503 opens its circuit, and its first success closes it",
          "[http][circuit]") {
  ParticipantServer p;
  p.SetDefault("/action", {503, "busy"});
  InProcessSettled s(QuickCircuits);
  constexpr int kSagas = 6;
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "busy-" + std::to_string(i);
    REQUIRE(s.Call("submit", Saga(gid, p.Url("/action"), p.Url("/compensate"))).status == 200);
  }
  REQUIRE(WaitForSample(s, CircuitSeries("settle_circuit_opens_total", p.port()),
                        [](double v) { return v == 1; }));
  p.SetDefault("/action", {});
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "busy-" + std::to_string(i);
    INFO(gid);
    CHECK(s.WaitForStatus(gid, "succeed"));
  }
  REQUIRE(WaitForSample(s, CircuitSeries("settle_circuit_state", p.port()),
                        [](double v) { return v == 0; }));
}

TEST_CASE(
    "no more calls than --host-max-in-flight reach a participant host at once: the others wait "
    "their turn and all succeed",
    "[http][circuit][cap]") {
  constexpr int kCap = 3;
  constexpr int kSagas = 12;
  ParticipantServer slow;
  slow.HoldAfter(0);  // every call is held until released
  InProcessSettled s([](app::ServerConfig& config) {
    QuickCircuits(config);
    config.hosts.max_in_flight = kCap;
  });
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "capped-" + std::to_string(i);
    REQUIRE(s.Call("submit", Saga(gid, slow.Url("/action"), slow.Url("/compensate"))).status ==
            200);
  }
  // Three calls are out; each other saga's call was held at the cap.
  REQUIRE(slow.WaitForHeld(kCap));
  REQUIRE(WaitForSample(s, CircuitSeries("settle_host_held_at_cap_total", slow.port()),
                        [](double v) { return v >= kSagas - kCap; }));
  CHECK(slow.Held() == kCap);
  const std::string m = s.client().Get("/api/metrics").body;
  CHECK(SampleValue(m, CircuitSeries("settle_host_calls_in_flight", slow.port())) == kCap);
  CHECK(SampleValue(m, CircuitSeries("settle_circuit_waiting", slow.port())) == kSagas - kCap);

  // Released, each ending call wakes a waiting saga: all finish, never more than three at once.
  slow.Release();
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "capped-" + std::to_string(i);
    INFO(gid);
    CHECK(s.WaitForStatus(gid, "succeed"));
  }
  const std::vector<testing::ReceivedCall> calls = slow.CallsTo("/action");
  CHECK(calls.size() == kSagas);
  std::size_t peak = 0;
  for (const testing::ReceivedCall& c : calls) {
    std::size_t overlapping = 0;  // calls being handled when `c` arrived, itself included
    for (const testing::ReceivedCall& other : calls) {
      if (other.received_at <= c.received_at && other.answered_at > c.received_at) ++overlapping;
    }
    peak = std::max(peak, overlapping);
  }
  CHECK(peak <= static_cast<std::size_t>(kCap));
  const std::string after = s.client().Get("/api/metrics").body;
  CHECK(SampleValue(after, CircuitSeries("settle_host_calls_in_flight", slow.port())) == 0);
  CHECK(SampleValue(after, CircuitSeries("settle_circuit_waiting", slow.port())) == 0);
  CHECK(SampleValue(after, CircuitSeries("settle_circuit_state", slow.port())) == 0);
}

}  // namespace
}  // namespace settle
