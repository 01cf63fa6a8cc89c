// The options of --help's "Running" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

namespace settle::app {

void AddRunningOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kRunning);
  app.add_option("--io-threads", c.io_threads,
                 "Threads that serve the API, run transaction passes and make branch calls, "
                 "all asynchronously (0: one per core)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--max-passes", c.max_passes,
                 "Transaction passes run at once (each may hold connections to participants); "
                 "more due transactions wait their turn")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--bulk-rate", c.bulk_rate,
                 "Transactions a bulk action's job acts on per second, at most (0: no limit)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  AddDurationOptions(app, text.durations, kRunning);
}

}  // namespace settle::app
