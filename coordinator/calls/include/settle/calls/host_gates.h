#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/engine/host_circuit.h"

namespace settle::calls {

// One participant host's gate as the metrics and the console see it.
struct HostView {
  std::string host;  // the origin: "http://127.0.0.1:9"
  engine::CircuitState state = engine::CircuitState::kClosed;
  std::uint64_t opens = 0;        // times its circuit opened
  std::size_t waiting = 0;        // transactions held for it
  int in_flight = 0;              // calls out now
  std::uint64_t held_at_cap = 0;  // calls held because max_in_flight were out
  bool releasing = false;         // its circuit closed and the waiting ones are being released
  Duration open_for{0};           // since it opened, while open
  Duration next_probe_in{0};      // while open
  std::vector<std::string> oldest_waiting;  // the first few gids held, oldest first
};

// Why a host's gate holds a transaction, and when it is next tried, as /query, /all and the
// console show it (docs/protocol.md §3.13).
struct HeldView {
  std::string host;  // the gate's key: the origin, or "other" (the overflow gate)
  engine::CircuitState state = engine::CircuitState::kClosed;
  // Why: "circuit_open" (its calls wait for the host's next probe), "probe_out" (a probe is
  // out: its answer decides), "releasing" (the circuit closed: its turn in the paced release),
  // "cap" (max_in_flight calls to the host are out: the first free slot).
  std::string reason;
  // When the host is next tried while its circuit is open (the circuit's next probe); absent
  // for the other reasons (it goes as soon as the probe answers, its turn comes or a slot frees).
  std::optional<TimePoint> next_try_at;
};

// What the rest of the coordinator knows of the participant hosts' gates (HostGatedCaller):
// the driver takes what woke a transaction, the scheduler asks whether a gate still holds one,
// the API and the metrics page show them. Given to each through its constructor.
//
// Thread-safe: every method from any thread at once.
class HostGates {
 public:
  virtual ~HostGates() = default;

  // The hosts whose gate woke `gid`, forgotten as they are returned: the transaction's rows
  // bound for them are due now.
  virtual std::vector<std::string> TakeReleased(const std::string& gid) = 0;
  // Whether some host's gate holds `gid`, and so will wake it.
  virtual bool Holds(const std::string& gid) const = 0;
  // Every gate there is (a host called and not forgotten, or the overflow gate "other"),
  // sorted by host.
  virtual std::vector<HostView> Hosts() const = 0;
  // Which gate holds `gid` and why; nullopt when none does.
  virtual std::optional<HeldView> HeldBy(const std::string& gid) const = 0;

  // An operator's Retry now of `gid` (docs/protocol.md §3.13), before its pass is scheduled:
  // the calls of its next pass (within kRetryNowFor) go out whatever their hosts' circuits
  // say. Each is then as a probe of its host's circuit: an answer closes it; a failure leaves
  // it open, its next probe when it was due. Only a host's cap on calls in flight still holds
  // such a call.
  virtual void RetryNow(const std::string& gid) = 0;
  // An operator's Retry now of a host (its origin, as OriginOf gives it, or "other"): the
  // oldest transaction its gate holds is woken at once and called as RetryNow says, whatever
  // its circuit says. Answers its gid; NotFound when no gate is kept for `host`; Conflict
  // when its gate holds no transaction.
  virtual Result<std::string> RetryHost(const std::string& host) = 0;
  // Forgets `gid` in every gate that holds it: it finished, or an operator stopped it.
  virtual void Forget(const std::string& gid) = 0;

  // How long a RetryNow waits for the transaction's pass to call.
  static constexpr Duration kRetryNowFor{60'000};
};

// "http://host:port" of a branch URL (or "grpc://host:port", "grpcs://host:port" of a gRPC
// method), the key of its host's gate: one gate per scheme, host and port; empty if it does
// not parse (no gate): core's UrlOrigin.
std::string OriginOf(const std::string& url);

// The key of a gate as an operator names its host (HostGates::RetryHost): "other" for the
// overflow gate, else OriginOf (a branch URL on the host names it too); empty if it names none.
std::string GateKeyOf(const std::string& host);

}  // namespace settle::calls
