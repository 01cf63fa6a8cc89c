// The duration flags, in their groups of --help (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "settle/core/duration_text.h"

namespace settle::app {

std::vector<DurationFlag> DurationFlags(ServerConfig& c) {
  return {
      {"--retry-interval",
       kBranchCalls,
       "Default wait before the first retry of a failed branch call, when a transaction does "
       "not set retry_interval; doubles per consecutive failure",
       &c.coordinator.retry_interval,
       {}},
      {"--retry-max",
       kBranchCalls,
       "Cap of the doubling retry interval",
       &c.retry.max_interval,
       {}},
      {"--circuit-probe-max",
       kBranchCalls,
       "Cap of the doubling wait between probes of a participant host whose circuit is open "
       "(the first wait is --circuit-probe-first)",
       &c.hosts.circuit.probe_max,
       {}},
      {"--circuit-probe-first",
       kBranchCalls,
       "First wait of a participant host's open circuit before its probe (1s; at most "
       "--circuit-probe-max, which a longer one is taken as); each failed probe doubles it",
       &c.hosts.circuit.probe_initial,
       {}},
      {"--branch-timeout",
       kBranchCalls,
       "Default timeout of each branch call, when a transaction does not set request_timeout",
       &c.coordinator.request_timeout,
       {}},
      {"--tcc-timeout",
       kBranchCalls,
       "Default timeout_to_fail of a TCC, XA or message: a TCC or XA still prepared this long "
       "after prepare is aborted; a message still prepared is checked with its query_prepared",
       &c.coordinator.prepared_timeout_to_fail,
       {}},
      {"--retention",
       kStorage,
       "Delete finished transactions this long after they finished, in the background in "
       "small batches (0: keep them forever)",
       &c.retention.keep,
       {}},
      {"--io-timeout",
       kLimits,
       "A client that sends nothing this long in the middle of a request gets 408 and is "
       "disconnected; one that stalls reading its answer is disconnected",
       &c.api.io_timeout,
       {}},
      {"--keep-alive-timeout",
       kLimits,
       "An idle client connection is closed after this long",
       &c.api.keep_alive_timeout,
       {}},
      {"--request-timeout",
       kLimits,
       "A request's head and body must all arrive within this of its first byte, however "
       "they are spread out; a client still sending then gets 408 and is disconnected",
       &c.api.request_timeout,
       {}},
      {"--lease",
       kCluster,
       "With a postgresql:// store shared by several settled: how long this instance's lease "
       "lasts after each renewal; if it dies, others take its transactions over after this. "
       "Branch calls are cut to fit in it",
       &c.lease.lease,
       {}},
      {"--lease-poll",
       kCluster,
       "With a postgresql:// store: how often the lease is renewed and the database is "
       "searched for transactions to drive",
       &c.lease.poll,
       {}},
      {"--max-clock-skew",
       kCluster,
       "With a postgresql:// store: every time is taken from the database's clock, read at "
       "each lease renewal; if this host's own clock is further than this from the database's, "
       "the instance stops claiming transactions (others drive them) until it comes back "
       "(0: never)",
       &c.clock_skew.max,
       {}},
      {"--shutdown-grace",
       kRunning,
       "On SIGTERM/SIGINT, how long in-flight branch calls may take to finish; the rest are "
       "resent after the next start",
       &c.shutdown_grace,
       {}},
  };
}

void AddDurationOptions(CLI::App& app, std::vector<DurationFlag>& durations, const char* group) {
  for (DurationFlag& flag : durations) {
    if (std::string_view(flag.group) != group) continue;
    flag.text = flag.target->count() == 0 ? "0" : FormatDuration(*flag.target);
    app.add_option(flag.name, flag.text, std::string(flag.help) + " (e.g. 500ms, 3s, 1m)")
        ->capture_default_str();
  }
}

}  // namespace settle::app
