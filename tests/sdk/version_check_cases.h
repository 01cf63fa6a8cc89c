#pragma once

// The contract of UpdateIfVersion and MoveState (settle/sdk/version_check.h), written once and
// run against both engines (version_check_test.cc: SQLite; postgres_version_check_test.cc:
// PostgreSQL). Races are left to the databases' own locks: no sleeps.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "settle/sdk/version_check.h"

namespace settle::sdk::test {

// A participant's database for the cases, holding
//   accounts(id INTEGER PRIMARY KEY, owner TEXT, balance INTEGER, version INTEGER, state TEXT)
// with account 1: owner "ann", balance 100, version 1, state "created".
class VersionDb {
 public:
  virtual ~VersionDb() = default;
  virtual BarrierStore& store() = 0;
  // One committed value of `sql` (a SELECT of one column of one row), as text.
  virtual std::string Text(const std::string& sql) = 0;
};

inline const char* const kAccountsSql =
    "CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT "
    "NULL, version INTEGER NOT NULL, state TEXT NOT NULL)";
inline const char* const kAnnSql = "INSERT INTO accounts VALUES (1, 'ann', 100, 1, 'created')";

// Runs `update` in a transaction of its own and commits it.
inline CasOutcome Update(VersionDb& db, const VersionedUpdate& update) {
  Result<std::unique_ptr<BarrierTransaction>> tx = db.store().Begin();
  REQUIRE(tx);
  Result<CasOutcome> outcome = UpdateIfVersion(**tx, update);
  INFO(outcome.status().ToString());
  REQUIRE(outcome);
  REQUIRE((*tx)->Commit().ok());
  return *outcome;
}

inline CasOutcome Move(VersionDb& db, const StateMove& move) {
  Result<std::unique_ptr<BarrierTransaction>> tx = db.store().Begin();
  REQUIRE(tx);
  Result<CasOutcome> outcome = MoveState(**tx, move);
  INFO(outcome.status().ToString());
  REQUIRE(outcome);
  REQUIRE((*tx)->Commit().ok());
  return *outcome;
}

// Sets account `id`'s balance to `balance` if it is at `version`.
inline VersionedUpdate SetBalance(std::int64_t id, std::int64_t version, std::int64_t balance) {
  return {"accounts", "id", id, "version", version, {{"balance", balance}}};
}

// Moves account 1 to `to` from `from`, along created, reserved, paid, shipped.
inline StateMove MoveTo(std::string to, std::vector<std::string> from) {
  return {"accounts",
          "id",
          std::int64_t{1},
          "state",
          {"created", "reserved", "paid", "shipped"},
          std::move(from),
          std::move(to)};
}

inline void AMatchingVersionIsAppliedAndBumped(VersionDb& db) {
  CHECK(Update(db, SetBalance(1, 1, 70)) == CasOutcome::kApplied);
  CHECK(db.Text("SELECT balance FROM accounts WHERE id = 1") == "70");
  CHECK(db.Text("SELECT version FROM accounts WHERE id = 1") == "2");
}

inline void TheSameUpdateRetriedIsAlreadyDone(VersionDb& db) {
  REQUIRE(Update(db, SetBalance(1, 1, 70)) == CasOutcome::kApplied);
  CHECK(Update(db, SetBalance(1, 1, 70)) == CasOutcome::kAlreadyDone);
  CHECK(db.Text("SELECT version FROM accounts WHERE id = 1") == "2");
  CHECK(db.Text("SELECT balance FROM accounts WHERE id = 1") == "70");
}

inline void AnotherChangeInBetweenIsAConflict(VersionDb& db) {
  // Someone else moved the row from version 1 to 2 with other values.
  REQUIRE(Update(db, SetBalance(1, 1, 50)) == CasOutcome::kApplied);
  CHECK(Update(db, SetBalance(1, 1, 70)) == CasOutcome::kConflict);
  // Two changes later, even this call's own values at the right version are not enough.
  REQUIRE(Update(db, SetBalance(1, 2, 70)) == CasOutcome::kApplied);
  CHECK(Update(db, SetBalance(1, 1, 70)) == CasOutcome::kConflict);
  CHECK(db.Text("SELECT version FROM accounts WHERE id = 1") == "3");
  // Every column of the update counts: the balance matches, the owner does not.
  VersionedUpdate both = SetBalance(1, 2, 70);
  both.set.emplace_back("owner", std::string("bob"));
  CHECK(Update(db, both) == CasOutcome::kConflict);
}

inline void AnUnknownIdIsNotFound(VersionDb& db) {
  CHECK(Update(db, SetBalance(2, 1, 70)) == CasOutcome::kNotFound);
  CHECK(Move(db, StateMove{"accounts",
                           "id",
                           std::int64_t{2},
                           "state",
                           {"created", "paid"},
                           {"created"},
                           "paid"}) == CasOutcome::kNotFound);
}

inline void TextValuesAreBoundNotSpliced(VersionDb& db) {
  VersionedUpdate update{
      "accounts", "id", std::int64_t{1},
      "version",  1,    {{"owner", std::string("o'brien; DROP TABLE accounts")}}};
  CHECK(Update(db, update) == CasOutcome::kApplied);
  CHECK(Update(db, update) == CasOutcome::kAlreadyDone);
  CHECK(db.Text("SELECT owner FROM accounts WHERE id = 1") == "o'brien; DROP TABLE accounts");
}

inline void AStateOnlyMovesForward(VersionDb& db) {
  CHECK(Move(db, MoveTo("reserved", {"created"})) == CasOutcome::kApplied);
  CHECK(db.Text("SELECT state FROM accounts WHERE id = 1") == "reserved");
  // The same move again: a retry.
  CHECK(Move(db, MoveTo("reserved", {"created"})) == CasOutcome::kAlreadyDone);
  CHECK(Move(db, MoveTo("paid", {"reserved"})) == CasOutcome::kApplied);
  // A late retry of an earlier step, after the row moved beyond it: done, and not undone.
  CHECK(Move(db, MoveTo("reserved", {"created"})) == CasOutcome::kAlreadyDone);
  CHECK(db.Text("SELECT state FROM accounts WHERE id = 1") == "paid");
  // Skipping a state that `from` does not allow is refused.
  CHECK(Move(db, MoveTo("shipped", {"created"})) == CasOutcome::kConflict);
  CHECK(db.Text("SELECT state FROM accounts WHERE id = 1") == "paid");
}

inline void AStateOutsideTheOrderIsAConflict(VersionDb& db) {
  REQUIRE(
      Update(
          db,
          VersionedUpdate{
              "accounts", "id", std::int64_t{1}, "version", 1, {{"state", std::string("lost")}}}) ==
      CasOutcome::kApplied);
  CHECK(Move(db, MoveTo("paid", {"created", "reserved"})) == CasOutcome::kConflict);
}

inline void InvalidArgumentsAreRefusedByName(VersionDb& db) {
  Result<std::unique_ptr<BarrierTransaction>> tx = db.store().Begin();
  REQUIRE(tx);
  auto refused = [&](const VersionedUpdate& update, const std::string& argument) {
    Result<CasOutcome> outcome = UpdateIfVersion(**tx, update);
    REQUIRE_FALSE(outcome);
    CHECK(outcome.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(outcome.status().message(), Catch::Contains(argument));
  };
  VersionedUpdate update = SetBalance(1, 1, 70);
  update.table = "accounts; DROP TABLE accounts";
  refused(update, "table");
  update = SetBalance(1, 1, 70);
  update.id_column = "1id";
  refused(update, "id_column");
  update = SetBalance(1, 1, 70);
  update.version_column = "";
  refused(update, "version_column");
  update = SetBalance(1, 1, 70);
  update.set = {{"balance = 0, owner", std::int64_t{1}}};
  refused(update, "set");
  update.set.clear();
  refused(update, "set");
  update = SetBalance(1, 1, 70);
  update.set = {{"version", std::int64_t{9}}};
  refused(update, "set");

  auto move_refused = [&](const StateMove& move, const std::string& argument) {
    Result<CasOutcome> outcome = MoveState(**tx, move);
    REQUIRE_FALSE(outcome);
    CHECK(outcome.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(outcome.status().message(), Catch::Contains(argument));
  };
  StateMove move = MoveTo("paid", {"created"});
  move.state_column = "state--";
  move_refused(move, "state_column");
  move_refused(MoveTo("lost", {"created"}), "to");
  move_refused(MoveTo("paid", {}), "from");
  move_refused(MoveTo("paid", {"shipped"}), "from");
  move_refused(MoveTo("paid", {"gone"}), "from");
  (*tx)->Rollback();
  CHECK(db.Text("SELECT balance FROM accounts WHERE id = 1") == "100");
}

// Two threads, each in its own transaction, update account 1 from the same version, round after
// round: the database's lock orders them, and exactly one of each pair is applied. The other
// sees the change: already done when both wrote the same balance (even rounds), a conflict
// when they differ (odd rounds).
inline void RacingUpdatesApplyExactlyOnce(VersionDb& db) {
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const std::int64_t version = round + 1;
    std::vector<Result<CasOutcome>> outcomes(2, Status::Internal("did not run"));
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        Result<std::unique_ptr<BarrierTransaction>> tx = db.store().Begin();
        if (!tx) {
          outcomes[t] = tx.status();
          return;
        }
        outcomes[t] = UpdateIfVersion(**tx, SetBalance(1, version, 1000 * round + (round % 2) * t));
        if (Status s = (*tx)->Commit(); !s.ok()) outcomes[t] = s;
      });
    }
    for (std::thread& thread : threads) thread.join();
    INFO("round " << round);
    REQUIRE(outcomes[0]);
    REQUIRE(outcomes[1]);
    CHECK(((*outcomes[0] == CasOutcome::kApplied) != (*outcomes[1] == CasOutcome::kApplied)));
    const CasOutcome loser = round % 2 == 0 ? CasOutcome::kAlreadyDone : CasOutcome::kConflict;
    CHECK(((*outcomes[0] == loser) != (*outcomes[1] == loser)));
  }
  CHECK(db.Text("SELECT version FROM accounts WHERE id = 1") == std::to_string(kRounds + 1));
}

}  // namespace settle::sdk::test
