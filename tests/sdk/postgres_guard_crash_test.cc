// IdempotencyGuard across kill -9 with the participant's data in PostgreSQL: the cases of
// guard_crash_cases.h, each in a schema of its own on the test server.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "guard_crash_cases.h"
#include "postgres_test_database.h"

namespace settle::sdk::test {
namespace {

// The GuardCrashDb of guard_crash_cases.h: a fresh schema that every process works in.
class PostgresGuardCrashDb final : public GuardCrashDb {
 public:
  std::vector<std::string> ServiceArgs() override { return {"--postgres", database_.conninfo()}; }

 private:
  settle::testing::PostgresTestDatabase database_;
};

TEST_CASE(
    "guard crash (postgres): kill -9 before the commit leaves no order, and the retry "
    "places it once the claim's lease ends",
    "[idempotency][process]") {
  PostgresGuardCrashDb db;
  AKillBeforeCommitLeavesNoOrderAndTheRetryRunsAfterTheLease(db);
}

TEST_CASE(
    "guard crash (postgres): kill -9 after the commit keeps the order, and the retry gets "
    "the unsent answer at once",
    "[idempotency][process]") {
  PostgresGuardCrashDb db;
  AKillAfterCommitKeepsTheOrderAndTheRetryGetsItsAnswer(db);
}

}  // namespace
}  // namespace settle::sdk::test
