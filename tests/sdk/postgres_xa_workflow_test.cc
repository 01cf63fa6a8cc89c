// XA steps inside a workflow (settle/sdk/xa_step.h, DTM's DoXa): each step prepares a local
// transaction of the service's PostgreSQL database, the workflow's commit makes them all
// visible, its rollback undoes them, and a run that stopped after a prepare goes on without
// running that business again. Against the settle of the test's process and the `postgres`
// fixture's server; judged by the rows another session sees and by pg_prepared_xacts.
#include "settle/sdk/xa_step.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "in_process_settled.h"
#include "postgres_test_database.h"
#include "settle/core/clock.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/client.h"
#include "settle/sdk/workflow.h"

namespace settle::sdk {
namespace {

using settle::testing::InProcessSettled;
using settle::testing::PostgresTestDatabase;

// What the workflow's steps do, across runs.
struct Ledger {
  PostgresXa* xa = nullptr;
  int debits = 0;              // times the first XA step's business ran
  bool refuse_credit = false;  // the second XA step's business says no
  int stop_after = 0;          // runs that stop (Unavailable) after both XA steps
  int debit_ongoing = 0;       // runs whose debit business answers ONGOING (Pending)
  int credit_ongoing = 0;      // likewise for the credit
};

XaBusiness InsertRow(const std::string& account, int amount, int* runs = nullptr,
                     const bool* refuse = nullptr, int* ongoing = nullptr) {
  return [=](const XaRequest& request, db::PgConnection& db) -> Status {
    if (runs != nullptr) ++*runs;
    if (ongoing != nullptr && *ongoing > 0) {
      --*ongoing;
      return Status::Pending("not yet");
    }
    if (refuse != nullptr && *refuse) return Status::Conflict("account " + account + " is closed");
    auto inserted =
        db.Query("INSERT INTO entry (gid, account, amount) VALUES ($1::text, $2::text, $3::bigint)",
                 db::PgParams().Text(request.gid).Text(account).Int(amount));
    return inserted ? Status::Ok() : inserted.status();
  };
}

asio::awaitable<Result<std::string>> Move(Ledger* ledger, Workflow& wf, std::string) {
  WorkflowStep debit = XaStep(
      *ledger->xa, "debit", InsertRow("1", -30, &ledger->debits, nullptr, &ledger->debit_ongoing));
  Result<std::string> debited = co_await wf.Do(debit);
  if (!debited) co_return debited.status();
  WorkflowStep credit =
      XaStep(*ledger->xa, "credit",
             InsertRow("2", 30, nullptr, &ledger->refuse_credit, &ledger->credit_ongoing));
  Result<std::string> credited = co_await wf.Do(credit);
  if (!credited) co_return credited.status();
  WorkflowStep notify{"notify", [ledger](const BranchRequest&) -> Result<std::string> {
                        if (ledger->stop_after > 0) {
                          --ledger->stop_after;
                          return Status::Unavailable("mail server down");
                        }
                        return std::string("sent");
                      }};
  Result<std::string> notified = co_await wf.Do(notify);
  if (!notified) co_return notified.status();
  co_return std::string("moved");
}

// settled, the service's database, its XA helper and its workflows.
struct World {
  PostgresTestDatabase database;
  InProcessSettled settled;
  std::unique_ptr<Client> client;
  SystemClock clock;
  std::unique_ptr<PostgresXa> xa;
  std::unique_ptr<db::PgConnection> reader;
  Ledger ledger;
  std::unique_ptr<Workflows> workflows;
  const std::string gid = "wfxa-" + database.schema();

  World() {
    auto made =
        Client::Create("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
    REQUIRE(made);
    client = std::move(*made);
    auto opened = PostgresXa::Open(database.conninfo(), *client, clock);
    INFO(opened.status().ToString());
    REQUIRE(opened);
    xa = std::move(*opened);
    auto connected = db::PgConnection::Open(database.conninfo());
    REQUIRE(connected);
    reader = std::move(*connected);
    REQUIRE(reader->Run("CREATE TABLE entry (gid TEXT, account TEXT, amount BIGINT)").ok());
    ledger.xa = xa.get();
    workflows = std::make_unique<Workflows>(
        *client, WorkflowsOptions{.resume_url = "http://127.0.0.1:1/resume"});
    REQUIRE(workflows
                ->Register("move",
                           [l = &ledger](Workflow& wf, std::string input) {
                             return Move(l, wf, std::move(input));
                           })
                .ok());
  }
  // A case that failed may leave a branch prepared: its locks would keep the schema.
  ~World() {
    auto rows = reader->Query("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE $1::text",
                              db::PgParams().Text("settle-xa/" + gid + "/%"));
    if (!rows) return;
    for (int i = 0; i < rows->rows(); ++i) {
      reader->Run("ROLLBACK PREPARED '" + rows->Text(i, 0) + "'").IgnoreError();
    }
  }

  // Committed entries, as another session sees them.
  std::int64_t Entries() {
    auto rows = reader->Query("SELECT count(*) FROM entry");
    REQUIRE(rows);
    return rows->Int(0, 0);
  }
  std::int64_t Prepared() {
    auto rows = reader->Query("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE $1::text",
                              db::PgParams().Text("settle-xa/" + gid + "/%"));
    REQUIRE(rows);
    return rows->Int(0, 0);
  }
  GlobalStatus Stored() {
    auto tx = client->Query(gid);
    REQUIRE(tx);
    REQUIRE(tx->has_value());
    return (*tx)->status;
  }
};

TEST_CASE("XA steps are prepared in the workflow and committed together when it succeeds",
          "[sdk][workflow][xa][postgres]") {
  World w;
  Result<std::string> done = w.workflows->Execute("move", w.gid, "");
  REQUIRE(done);
  CHECK(*done == "moved");
  CHECK(w.Entries() == 2);
  CHECK(w.Prepared() == 0);
  CHECK(w.Stored() == GlobalStatus::kSucceed);
}

TEST_CASE("an XA step its business refuses rolls back the prepared step before it",
          "[sdk][workflow][xa][postgres]") {
  World w;
  w.ledger.refuse_credit = true;
  Result<std::string> failed = w.workflows->Execute("move", w.gid, "");
  REQUIRE_FALSE(failed);
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK(failed.status().message() == "account 2 is closed");
  CHECK(w.Entries() == 0);
  CHECK(w.Prepared() == 0);
  CHECK(w.Stored() == GlobalStatus::kFailed);
}

TEST_CASE("a run that stops after its XA steps leaves them prepared, and the next commits them",
          "[sdk][workflow][xa][postgres]") {
  World w;
  w.ledger.stop_after = 1;
  Result<std::string> stopped = w.workflows->Execute("move", w.gid, "");
  REQUIRE_FALSE(stopped);
  CHECK(stopped.status().code() == StatusCode::kUnavailable);
  // Prepared, holding their changes back from everyone else.
  CHECK(w.Prepared() == 2);
  CHECK(w.Entries() == 0);
  CHECK(w.Stored() == GlobalStatus::kPrepared);

  Result<std::string> done = w.workflows->Execute("move", w.gid, "");
  REQUIRE(done);
  CHECK(w.ledger.debits == 1);
  CHECK(w.Entries() == 2);
  CHECK(w.Prepared() == 0);
}

TEST_CASE("an XA step prepared by a run that stopped before recording it is not run again",
          "[sdk][workflow][xa][postgres]") {
  World w;
  // What a run that died between the first step's PREPARE and its record leaves: the branch
  // prepared under the workflow's gid and branch 01, unknown to the step log.
  XaRequest first;
  first.gid = w.gid;
  first.branch_id = "01";
  REQUIRE(w.xa->PrepareStep(first, InsertRow("1", -30, &w.ledger.debits)).ok());
  REQUIRE(w.Prepared() == 1);

  Result<std::string> done = w.workflows->Execute("move", w.gid, "");
  REQUIRE(done);
  CHECK(w.ledger.debits == 1);  // the prepared branch was taken as the step's, not run again
  CHECK(w.Entries() == 2);
  CHECK(w.Prepared() == 0);
  CHECK(w.Stored() == GlobalStatus::kSucceed);
}

// DTM's TestWorkflowXaResume: ONGOING inside each XA step's business, then after both; each
// run goes one point further, and the fourth commits.
TEST_CASE("XA steps answering ONGOING roll back and run again on the next run, then commit",
          "[sdk][workflow][xa][postgres]") {
  World w;
  w.ledger.debit_ongoing = 1;
  w.ledger.credit_ongoing = 1;
  w.ledger.stop_after = 1;
  CHECK(w.workflows->Execute("move", w.gid, "").status().code() == StatusCode::kPending);
  CHECK(w.Prepared() == 0);  // the debit's transaction was rolled back, not prepared
  CHECK(w.workflows->Execute("move", w.gid, "").status().code() == StatusCode::kPending);
  CHECK(w.Prepared() == 1);  // the debit prepared and recorded; the credit rolled back
  CHECK(w.workflows->Execute("move", w.gid, "").status().code() == StatusCode::kUnavailable);
  CHECK(w.Prepared() == 2);
  CHECK(w.Entries() == 0);
  REQUIRE(w.workflows->Execute("move", w.gid, "").ok());
  CHECK(w.ledger.debits == 2);
  CHECK(w.Entries() == 2);
  CHECK(w.Prepared() == 0);
  CHECK(w.Stored() == GlobalStatus::kSucceed);
}

}  // namespace
}  // namespace settle::sdk
