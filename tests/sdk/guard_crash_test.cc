// IdempotencyGuard across kill -9 with the participant's data in SQLite: the cases of
// guard_crash_cases.h, each on a file of its own.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "guard_crash_cases.h"
#include "temp_dir.h"

namespace settle::sdk::test {
namespace {

// The GuardCrashDb of guard_crash_cases.h: a fresh SQLite file that every process opens.
class SqliteGuardCrashDb final : public GuardCrashDb {
 public:
  std::vector<std::string> ServiceArgs() override { return {"--sqlite", dir_.File("shop.db")}; }

 private:
  settle::testing::TempDir dir_;
};

TEST_CASE(
    "guard crash (sqlite): kill -9 before the commit leaves no order, and the retry "
    "places it once the claim's lease ends",
    "[idempotency][process]") {
  SqliteGuardCrashDb db;
  AKillBeforeCommitLeavesNoOrderAndTheRetryRunsAfterTheLease(db);
}

TEST_CASE(
    "guard crash (sqlite): kill -9 after the commit keeps the order, and the retry gets "
    "the unsent answer at once",
    "[idempotency][process]") {
  SqliteGuardCrashDb db;
  AKillAfterCommitKeepsTheOrderAndTheRetryGetsItsAnswer(db);
}

}  // namespace
}  // namespace settle::sdk::test
