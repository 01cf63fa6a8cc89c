#pragma once

// The settled processes a process test kills and restarts: one on a SQLite file, or, compiled
// with SETTLE_TEST_STORE_POSTGRES (settle_postgres_process_tests), two sharing a fresh
// PostgreSQL database with leases (2 s, polled every 100 ms), each with a log of its own.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"
#ifdef SETTLE_TEST_STORE_POSTGRES
#include "postgres_test_database.h"
#endif

namespace settle::testing {

class SettledInstances {
 public:
#ifdef SETTLE_TEST_STORE_POSTGRES
  static constexpr int kCount = 2;
#else
  static constexpr int kCount = 1;
#endif

  // `tokens`: the token file's text; `args`: every instance's flags (beside the token file,
  // the store and, with PostgreSQL, its instance id and lease). Not started: Start().
  SettledInstances(const std::string& tokens, std::vector<std::string> args)
      : args_(std::move(args)) {
    std::ofstream(tokens_) << tokens;
  }

  // Starts every instance, stopping (killing) the ones running first.
  void Start() {
    instances_.clear();
    for (int i = 0; i < kCount; ++i) {
      std::vector<std::string> args = args_;
      args.insert(args.end(), {"--token-file", tokens_});
#ifdef SETTLE_TEST_STORE_POSTGRES
      args.insert(args.end(), {"--instance-id", "i" + std::to_string(i), "--lease", "2s",
                               "--lease-poll", "100ms"});
      const std::string store = database_.conninfo();
#else
      const std::string store = dir_.File("settle.db");
#endif
      instances_.push_back(std::make_unique<SettledProcess>(
          store, args, 0, dir_.File("settled-" + std::to_string(i) + ".log")));
    }
  }
  // kill -9 of every instance.
  void KillAll() {
    for (auto& instance : instances_) instance->Kill();
  }
  // A client of instance `instance` whose requests carry `token`.
  JsonClient As(const std::string& token, int instance = 0) const {
    JsonClient c(instances_.at(instance)->port());
    c.SetHeader("Authorization", "Bearer " + token);
    return c;
  }

 private:
  TempDir dir_;
#ifdef SETTLE_TEST_STORE_POSTGRES
  PostgresTestDatabase database_;
#endif
  std::string tokens_ = dir_.File("tokens");
  std::vector<std::string> args_;
  std::vector<std::unique_ptr<SettledProcess>> instances_;
};

}  // namespace settle::testing
