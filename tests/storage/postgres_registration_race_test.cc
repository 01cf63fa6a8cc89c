// The timeout/registration race on PostgreSQL, played with two real database sessions: one
// commits a decision on a prepared TCC (its status change and the branch count it decided
// from), the other registers a branch, and the two are interleaved inside settle_apply_group,
// each left open before its COMMIT. Under READ COMMITTED a count cannot see a registration that
// has not committed, so the registration's status check must hold the global row until it
// commits: the decision waits for it and then counts it, or the registration waits for the
// decision and then reads the status it committed. Schema version 4 did neither.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "eventually.h"
#include "group_committer.h"
#include "pg_group_applier.h"
#include "pg_schema.h"
#include "postgres_test_database.h"
#include "record_builders.h"
#include "settle/db/pg_connection.h"
#include "settle/storage/postgres_store.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

using settle::testing::PostgresTestDatabase;

std::unique_ptr<db::PgConnection> Connect(const PostgresTestDatabase& database) {
  Result<std::unique_ptr<db::PgConnection>> c = db::PgConnection::Open(database.conninfo());
  INFO(c.status().ToString());
  REQUIRE(c);
  return std::move(c).value();
}

// settle_apply_group's argument for one batch, as group commit sends it.
std::string Group(const WriteBatch& batch) {
  Result<std::string> encoded = PgGroupApplier::EncodeBatch(batch);
  REQUIRE(encoded);
  return "[" + *encoded + "]";
}

// Runs the group in the session's open transaction; answers settle_apply_group's result: "[null]"
// when the batch applied, else its refusal.
std::string Apply(db::PgConnection& session, const std::string& group) {
  Result<db::PgResult> applied =
      session.Query("SELECT settle_apply_group($1::jsonb)::text", db::PgParams().Text(group));
  INFO(applied.status().ToString());
  REQUIRE(applied);
  return applied->Text(0, 0);
}

// The decision a timeout takes from a prepared TCC it read with `branches` branch rows.
WriteBatch TimeoutAbort(std::size_t branches) {
  GlobalRecord aborting = MakeGlobal("g", TransType::kTcc, GlobalStatus::kAborting);
  aborting.rollback_reason = "timeout_to_fail";
  return Batch(UpdateGlobal{aborting, GlobalStatus::kPrepared}, ExpectBranchCount{"g", branches});
}

// registerBranch of branch `id`, as the coordinator commits it.
WriteBatch Registration(const std::string& id) {
  return Batch(ExpectGlobalType{"g", TransType::kTcc},
               ExpectGlobalStatus{"g", {GlobalStatus::kPrepared}},
               InsertBranch{MakeBranch("g", id, BranchOp::kCancel)},
               InsertBranch{MakeBranch("g", id, BranchOp::kConfirm)});
}

// Whether `count` sessions of this test's schema wait for a lock, polled for up to 10 s.
bool WaitersForLock(db::PgConnection& observer, const PostgresTestDatabase& database,
                    std::int64_t count) {
  return settle::testing::Eventually(
      [&] {
        Result<db::PgResult> waiting = observer.Query(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1::text "
            "AND wait_event_type = 'Lock'",
            db::PgParams().Text(database.schema()));
        REQUIRE(waiting);
        return waiting->Int(0, 0) == count;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20));
}

struct RaceWorld {
  explicit RaceWorld(int schema_version) {
    {
      auto migrating = Connect(database);
      REQUIRE(MigratePgSchema(*migrating, schema_version).ok());
    }
    first = Connect(database);
    second = Connect(database);
    observer = Connect(database);
    // The prepared TCC, in the columns every version has: this binary's InsertGlobal ('igt',
    // schema version 12) is not one an older schema knows.
    const Status inserted = first->Run(
        "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
        "rollback_reason, next_cron_time) "
        "VALUES ('g', 'tcc', 'prepared', '{}'::bytea, 1000, 1000, ''::bytea, 36000)");
    INFO(inserted.ToString());
    REQUIRE(inserted.ok());
  }
  // The global's status and branch rows, as committed.
  std::pair<std::string, std::int64_t> Stored() {
    Result<db::PgResult> row = observer->Query(
        "SELECT status, (SELECT count(*) FROM trans_branch_op) FROM trans_global WHERE gid = 'g'");
    REQUIRE(row);
    return {row->Text(0, 0), row->Int(0, 1)};
  }

  PostgresTestDatabase database;
  std::unique_ptr<db::PgConnection> first;
  std::unique_ptr<db::PgConnection> second;
  std::unique_ptr<db::PgConnection> observer;
};

TEST_CASE(
    "a decision that counted the branches before a registration committed waits for it, "
    "then is refused",
    "[storage][postgres][race]") {
  RaceWorld world(LatestPgSchemaVersion());
  // The registration passes its status check, not yet committed.
  REQUIRE(world.first->Run("BEGIN").ok());
  REQUIRE(Apply(*world.first, Group(Registration("01"))) == "[null]");
  // The timeout decides from the transaction it read without that branch.
  std::future<std::string> decision = std::async(
      std::launch::async, [&world] { return Apply(*world.second, Group(TimeoutAbort(0))); });
  REQUIRE(WaitersForLock(*world.observer, world.database, 1));
  CHECK(decision.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);

  REQUIRE(world.first->Run("COMMIT").ok());

  CHECK_THAT(decision.get(), Catch::Contains("has 2 branch rows, expected 0"));
  CHECK(world.Stored() == std::pair<std::string, std::int64_t>{"prepared", 2});
}

TEST_CASE(
    "a registration whose status check comes after a decision's status change waits for it, "
    "then is refused",
    "[storage][postgres][race]") {
  RaceWorld world(LatestPgSchemaVersion());
  REQUIRE(world.second->Run("BEGIN").ok());
  REQUIRE(Apply(*world.second, Group(TimeoutAbort(0))) == "[null]");
  std::future<std::string> registration = std::async(
      std::launch::async, [&world] { return Apply(*world.first, Group(Registration("01"))); });
  REQUIRE(WaitersForLock(*world.observer, world.database, 1));

  REQUIRE(world.second->Run("COMMIT").ok());

  CHECK_THAT(registration.get(), Catch::Contains("is aborting, expected prepared"));
  CHECK(world.Stored() == std::pair<std::string, std::int64_t>{"aborting", 0});
}

TEST_CASE(
    "schema version 4 let a registration and a decision that never counted it both commit "
    "(the race version 5 closes)",
    "[storage][postgres][race]") {
  RaceWorld world(4);
  REQUIRE(world.first->Run("BEGIN").ok());
  REQUIRE(Apply(*world.first, Group(Registration("01"))) == "[null]");

  // Nothing holds the global row: the decision neither waits nor sees the branch.
  CHECK(Apply(*world.second, Group(TimeoutAbort(0))) == "[null]");
  REQUIRE(world.first->Run("COMMIT").ok());

  CHECK(world.Stored() == std::pair<std::string, std::int64_t>{"aborting", 2});
}

TEST_CASE(
    "a group the server picks to break a deadlock between such locks is run again and committed",
    "[storage][postgres][race]") {
  PostgresTestDatabase database;
  {
    auto migrating = Connect(database);
    REQUIRE(MigratePgSchema(*migrating, LatestPgSchemaVersion()).ok());
    REQUIRE(Apply(*migrating,
                  Group(Batch(InsertGlobal{MakeGlobal("g1")}, InsertGlobal{MakeGlobal("g2")},
                              InsertGlobal{MakeGlobal("g3")}))) == "[null]");
  }
  auto committer = Connect(database);
  auto other = Connect(database);
  auto gate = Connect(database);
  auto observer = Connect(database);
  // Only the group's session looks for deadlocks, so the server can pick no other victim, and
  // it looks only once its wait closes the cycle: the check runs once per wait, after
  // deadlock_timeout, so the wait that closes the cycle must be the group's.
  REQUIRE(other->Run("SET deadlock_timeout = '1h'").ok());
  REQUIRE(committer->Run("SET deadlock_timeout = '100ms'").ok());
  PgGroupApplier applier(*committer);
  // Another session holds g2, and a gate holds g3.
  REQUIRE(other->Run("BEGIN").ok());
  REQUIRE(other->Query("SELECT 1 FROM trans_global WHERE gid = 'g2' FOR UPDATE"));
  REQUIRE(gate->Run("BEGIN").ok());
  REQUIRE(gate->Query("SELECT 1 FROM trans_global WHERE gid = 'g3' FOR UPDATE"));
  // The group decides g1, then waits at the gate, before it goes on to g2.
  const WriteBatch first = Batch(UpdateGlobal{
      MakeGlobal("g1", TransType::kTcc, GlobalStatus::kAborting), GlobalStatus::kPrepared});
  const WriteBatch middle = Batch(UpdateGlobal{
      MakeGlobal("g3", TransType::kTcc, GlobalStatus::kAborting), GlobalStatus::kPrepared});
  const WriteBatch last = Batch(UpdateGlobal{
      MakeGlobal("g2", TransType::kTcc, GlobalStatus::kAborting), GlobalStatus::kPrepared});
  const std::vector<const WriteBatch*> group = {&first, &middle, &last};
  std::future<GroupResult> applied =
      std::async(std::launch::async, [&] { return applier.ApplyGroup(group); });
  REQUIRE(WaitersForLock(*observer, database, 1));
  // The other session wants g1, which the group holds.
  std::future<bool> locked = std::async(std::launch::async, [&] {
    return other->Query("SELECT 1 FROM trans_global WHERE gid = 'g1' FOR UPDATE").ok();
  });
  REQUIRE(WaitersForLock(*observer, database, 2));
  // The gate opens; the group goes on to g2 and closes the cycle; the server fails it.
  REQUIRE(gate->Run("COMMIT").ok());
  REQUIRE(locked.get());  // granted once the group's first try rolled back
  REQUIRE(other->Run("COMMIT").ok());

  const GroupResult result = applied.get();
  CHECK(result.committed);
  REQUIRE(result.statuses.size() == 3);
  CHECK(result.statuses[0].ok());
  CHECK(result.statuses[1].ok());
  CHECK(result.statuses[2].ok());
  Result<db::PgResult> stored =
      observer->Query("SELECT count(*) FROM trans_global WHERE status = 'aborting'");
  REQUIRE(stored);
  CHECK(stored->Int(0, 0) == 3);
}

}  // namespace
}  // namespace settle::storage::testing
