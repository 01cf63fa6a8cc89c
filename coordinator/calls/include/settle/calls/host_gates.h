#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "settle/core/clock.h"
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
};

// "http://host:port" of a branch URL (or "grpc://host:port", "grpcs://host:port" of a gRPC
// method), the key of its host's gate: one gate per scheme, host and port; empty if it does
// not parse (no gate).
std::string OriginOf(const std::string& url);

}  // namespace settle::calls
