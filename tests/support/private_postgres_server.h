#pragma once

#include <string>

#include "temp_dir.h"

namespace settle::testing {

// A PostgreSQL server of the test's own (scripts/postgres-test-server in a temp state dir),
// for tests that crash and restart the database under a running coordinator, which the
// shared test server must never see. Stopped, with its data, on destruction.
class PrivatePostgresServer {
 public:
  PrivatePostgresServer();  // starts it; the test fails (throws) if it does not come up
  ~PrivatePostgresServer();
  PrivatePostgresServer(const PrivatePostgresServer&) = delete;
  PrivatePostgresServer& operator=(const PrivatePostgresServer&) = delete;

  // A postgresql:// URL of its empty database.
  const std::string& conninfo() const { return conninfo_; }

  void Crash();    // an immediate shutdown, as a crash: no checkpoint, connections cut
  void Restart();  // up again on the same port, recovered from its WAL

 private:
  void Run(const std::string& action) const;     // throws if the script fails
  bool Script(const std::string& action) const;  // true if the script succeeded

  TempDir state_;
  std::string conninfo_;
};

}  // namespace settle::testing
