#include "postgres_test_database.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>

#include "settle/db/pg_connection.h"

namespace settle::testing {

std::string PostgresTestServer() {
  const char* file = std::getenv("SETTLE_TEST_POSTGRES_FILE");
  INFO("SETTLE_TEST_POSTGRES_FILE names the conninfo file of scripts/postgres-test-server");
  REQUIRE(file != nullptr);
  std::ifstream in(file);
  std::string conninfo;
  std::getline(in, conninfo);
  INFO("reading " << file);
  REQUIRE(!conninfo.empty());
  return conninfo;
}

PostgresTestDatabase::PostgresTestDatabase() : server_conninfo_(PostgresTestServer()) {
  static std::atomic<int> counter{0};
  schema_ = "t" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  Admin("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE; CREATE SCHEMA " + schema_);
  // The application name lets a test find (and end) this database's connections only.
  conninfo_ =
      server_conninfo_ + "?application_name=" + schema_ + "&options=-c%20search_path%3D" + schema_;
}

PostgresTestDatabase::~PostgresTestDatabase() {
  Result<std::unique_ptr<db::PgConnection>> c = db::PgConnection::Open(server_conninfo_);
  if (c) (*c)->Run("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE").IgnoreError();
}

void PostgresTestDatabase::Admin(const std::string& sql) const {
  Result<std::unique_ptr<db::PgConnection>> c = db::PgConnection::Open(server_conninfo_);
  INFO(c.status().ToString());
  REQUIRE(c);
  Status s = (*c)->Run(sql);
  INFO(sql << ": " << s.ToString());
  REQUIRE(s.ok());
}

}  // namespace settle::testing
