// The options of --help's "Storage" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace settle::app {

void AddStorageOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kStorage);
  app.add_option("--store,--db", c.db_path,
                 "Where transactions are stored: an SQLite file, created on first start, or a "
                 "postgresql://user:password@host:port/database URL, which several settled "
                 "instances may share")
      ->capture_default_str();
  app.add_option_function<std::int64_t>(
         "--commit-delay-us",
         [&c](std::int64_t us) { c.store.commit_delay = std::chrono::microseconds(us); },
         "Under steady load, how long the database writer waits for more transactions to share "
         "the next fsync: fewer fsyncs for more latency, for a disk shared with other syncing "
         "processes (0: never wait)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{100'000}))
      ->default_str(std::to_string(c.store.commit_delay.count()));
  AddDurationOptions(app, text.durations, kStorage);
}

}  // namespace settle::app
