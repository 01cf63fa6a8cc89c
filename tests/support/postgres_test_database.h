#pragma once

#include <string>

namespace settle::testing {

// A fresh, empty schema on the test PostgreSQL server, dropped with everything in it when
// this object goes. The server is the one scripts/postgres-test-server started for the test
// run: its conninfo is in the file that SETTLE_TEST_POSTGRES_FILE names (ctest sets it).
// Without it, the constructor fails the test: PostgreSQL tests are never skipped silently.
class PostgresTestDatabase {
 public:
  PostgresTestDatabase();
  ~PostgresTestDatabase();
  PostgresTestDatabase(const PostgresTestDatabase&) = delete;
  PostgresTestDatabase& operator=(const PostgresTestDatabase&) = delete;

  // A postgresql:// URL of the test database with this schema first on the search path, and
  // the schema's name as application_name: what settled --store takes.
  const std::string& conninfo() const { return conninfo_; }
  // The server's database, without the schema.
  const std::string& server_conninfo() const { return server_conninfo_; }
  const std::string& schema() const { return schema_; }

  // Runs administrative SQL on the server (not in this schema), requiring it to succeed.
  void Admin(const std::string& sql) const;

 private:
  std::string server_conninfo_;
  std::string schema_;
  std::string conninfo_;
};

// The conninfo of the test server, from SETTLE_TEST_POSTGRES_FILE; fails the test without it.
std::string PostgresTestServer();

}  // namespace settle::testing
