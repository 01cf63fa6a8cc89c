// The options of --help's "Branch calls" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <cstddef>

namespace settle::app {

void AddBranchCallsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kBranchCalls);
  AddDurationOptions(app, text.durations, kBranchCalls);
  app.add_option("--stuck-after", c.retry.stuck_after,
                 "Consecutive failures of one branch after which its transaction is flagged "
                 "stuck (retries go on)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--pause-after", c.retry.pause_after,
                 "Consecutive failures of one branch after which its transaction is paused "
                 "(parked) for an operator instead of retried, with an alert; a transaction's "
                 "custom_data \"pause_after\" overrides it (0: never)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--circuit-failures", c.hosts.circuit.failures,
                 "Consecutive connection failures, timeouts or 5xx answers from one participant "
                 "host (scheme, host, port) that open its circuit: its calls then wait for a "
                 "probe to succeed instead of retrying one by one (0: no circuits)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--circuit-release-rate", c.hosts.release_per_second,
                 "When the circuit of a participant host closes, the transactions that waited "
                 "for it resume oldest first at most this many a second (and within "
                 "--host-max-in-flight), so the recovered service is not flattened (0: as fast "
                 "as the cap allows)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--host-max-in-flight", c.hosts.max_in_flight,
                 "Branch calls in flight to one participant host at most, at all times: a "
                 "transaction that would exceed it waits its turn without holding a pass, so "
                 "one slow participant cannot take every connection (0: no cap)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-hosts", c.hosts.max_hosts,
                 "Participant hosts (scheme, host, port) with a gate of their own, circuit and "
                 "metric series; the hosts beyond share one, host=\"other\"; a gate idle for "
                 "10 minutes is forgotten (0: no cap)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
}

}  // namespace settle::app
