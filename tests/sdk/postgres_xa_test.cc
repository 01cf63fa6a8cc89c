// XA on PostgreSQL, the participant's side: the branch's local transaction is prepared and
// registered inside the action, and committed or rolled back by phase 2. Each case runs in a
// schema of its own on the test server (started with max_prepared_transactions), with a fake
// coordinator that records registerBranch and answers as scripted.
#include "settle/sdk/postgres_xa.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "eventually.h"
#include "fake_clock.h"
#include "participant_server.h"
#include "postgres_test_database.h"
#include "sdk_test_support.h"
#include "settle/core/trace_context.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/xa.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using settle::testing::FakeClock;
using settle::testing::ParticipantServer;
using settle::testing::PostgresTestDatabase;
using settle::testing::ScriptedAnswer;
using namespace settle::sdk::test;

constexpr const char* kRegister = "/api/settle/registerBranch";

// Business code: one row per branch in `transfer`, or a refusal, or SQL that fails.
XaBusiness Insert() {
  return [](const XaRequest& request, db::PgConnection& db) -> Status {
    auto inserted = db.Query("INSERT INTO transfer (branch, amount) VALUES ($1::text, 30)",
                             db::PgParams().Text(request.gid + "/" + request.branch_id));
    return inserted ? Status::Ok() : inserted.status();
  };
}

// A participant database, the XA helper on it, and the fake coordinator it registers with.
class XaBank {
 public:
  XaBank() : gid_("xa-" + database_.schema()) {
    auto opened = PostgresXa::Open(database_.conninfo(), *client_, clock_);
    INFO(opened.status().ToString());
    REQUIRE(opened);
    xa_ = std::move(opened).value();
    auto reader = db::PgConnection::Open(database_.conninfo());
    REQUIRE(reader);
    reader_ = std::move(reader).value();
    REQUIRE(reader_->Run("CREATE TABLE transfer (branch TEXT PRIMARY KEY, amount BIGINT)").ok());
  }
  // A failed case may leave a branch prepared: its locks would keep the schema from being
  // dropped.
  ~XaBank() {
    auto rows = reader_->Query("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE $1::text",
                               db::PgParams().Text("settle-xa/" + gid_ + "%"));
    if (!rows) return;
    for (int i = 0; i < rows->rows(); ++i) {
      reader_->Run("ROLLBACK PREPARED '" + rows->Text(i, 0) + "'").IgnoreError();
    }
  }

  PostgresXa& xa() { return *xa_; }
  ParticipantServer& coordinator() { return coordinator_; }
  Client& client() { return *client_; }
  const std::string& gid() const { return gid_; }
  const std::string& conninfo() const { return database_.conninfo(); }

  XaRequest Request(XaOp op, const std::string& branch_id = "01") const {
    XaRequest request;
    request.path = "/api/TransOutXa";
    request.gid = gid_;
    request.branch_id = branch_id;
    request.op = op;
    if (op == XaOp::kAction) request.phase2_url = "http://127.0.0.1:8081/api/TransOutXa";
    return request;
  }
  BranchReply Action(const XaBusiness& business = Insert(), const std::string& branch_id = "01") {
    return xa_->LocalTransaction(Request(XaOp::kAction, branch_id), business);
  }
  BranchReply Commit(const std::string& branch_id = "01") {
    return xa_->Phase2(Request(XaOp::kCommit, branch_id));
  }
  BranchReply Rollback(const std::string& branch_id = "01") {
    return xa_->Phase2(Request(XaOp::kRollback, branch_id));
  }

  // Rows committed in `transfer`, as another session sees them.
  std::int64_t Rows() {
    auto rows = reader_->Query("SELECT count(*) FROM transfer");
    REQUIRE(rows);
    return rows->Int(0, 0);
  }
  bool Prepared(const std::string& branch_id = "01") {
    auto name = PostgresXa::PreparedTransactionName(gid_, branch_id);
    REQUIRE(name);
    auto rows = reader_->Query("SELECT 1 FROM pg_prepared_xacts WHERE gid = $1::text",
                               db::PgParams().Text(*name));
    REQUIRE(rows);
    return rows->rows() == 1;
  }
  // Waits until a session of this case's schema waits for a row lock; false after 10 s.
  bool WaitForLockWaiter() {
    return settle::testing::Eventually(
        [&] {
          auto rows = reader_->Query(
              "SELECT 1 FROM pg_stat_activity WHERE application_name = $1::text "
              "AND wait_event_type = 'Lock'",
              db::PgParams().Text(database_.schema()));
          REQUIRE(rows);
          return rows->rows() > 0;
        },
        std::chrono::seconds(10), std::chrono::milliseconds(5));
  }
  std::vector<json> Registrations() const {
    std::vector<json> bodies;
    for (const auto& call : coordinator_.CallsTo(kRegister))
      bodies.push_back(json::parse(call.body));
    return bodies;
  }

 private:
  PostgresTestDatabase database_;
  ParticipantServer coordinator_;
  std::unique_ptr<Client> client_ = MakeClient(coordinator_.Url("/api/settle"));
  FakeClock clock_;
  std::string gid_;
  std::unique_ptr<PostgresXa> xa_;
  std::unique_ptr<db::PgConnection> reader_;
};

TEST_CASE(
    "an XA action prepares its local transaction, then registers the branch, its row "
    "appears only at COMMIT PREPARED",
    "[sdk][xa][postgres]") {
  XaBank bank;
  BranchReply reply = bank.Action();
  INFO(reply.status.ToString());
  REQUIRE(reply.status.ok());
  CHECK(bank.Prepared());
  CHECK(bank.Rows() == 0);
  REQUIRE(bank.Registrations().size() == 1);
  CHECK(bank.Registrations()[0] == json({{"gid", bank.gid()},
                                         {"branch_id", "01"},
                                         {"trans_type", "xa"},
                                         {"url", "http://127.0.0.1:8081/api/TransOutXa"},
                                         {"data", ""}}));

  reply = bank.Commit();
  INFO(reply.status.ToString());
  REQUIRE(reply.status.ok());
  CHECK_FALSE(bank.Prepared());
  CHECK(bank.Rows() == 1);
}

TEST_CASE("an XA action registers its branch with the trace context the action carried",
          "[sdk][xa][postgres][trace]") {
  XaBank bank;
  const std::string traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  XaRequest traced = bank.Request(XaOp::kAction, "01");
  traced.trace = ParseTraceparent(traceparent, "rojo=00f067aa0ba902b7").value();
  REQUIRE(bank.xa().LocalTransaction(traced, Insert()).status.ok());
  REQUIRE(bank.xa().LocalTransaction(bank.Request(XaOp::kAction, "02"), Insert()).status.ok());
  const auto registrations = bank.coordinator().CallsTo(kRegister);
  REQUIRE(registrations.size() == 2);
  CHECK(registrations[0].headers.at("traceparent") == traceparent);
  CHECK(registrations[0].headers.at("tracestate") == "rojo=00f067aa0ba902b7");
  // An action without one registers without one.
  CHECK(registrations[1].headers.count("traceparent") == 0);
  CHECK(registrations[1].headers.count("tracestate") == 0);
  REQUIRE(bank.Rollback("01").status.ok());
  REQUIRE(bank.Rollback("02").status.ok());
}

TEST_CASE("ROLLBACK PREPARED of a prepared branch leaves nothing behind", "[sdk][xa][postgres]") {
  XaBank bank;
  REQUIRE(bank.Action().status.ok());
  REQUIRE(bank.Prepared());
  BranchReply reply = bank.Rollback();
  INFO(reply.status.ToString());
  REQUIRE(reply.status.ok());
  CHECK_FALSE(bank.Prepared());
  CHECK(bank.Rows() == 0);
}

TEST_CASE("phase 2 is idempotent: a repeated commit or rollback answers SUCCESS",
          "[sdk][xa][postgres]") {
  XaBank bank;
  REQUIRE(bank.Action(Insert(), "01").status.ok());
  REQUIRE(bank.Action(Insert(), "02").status.ok());
  CHECK(bank.Commit("01").status.ok());
  CHECK(bank.Commit("01").status.ok());  // already committed: its barrier row says so
  CHECK(bank.Rollback("02").status.ok());
  CHECK(bank.Rollback("02").status.ok());
  CHECK(bank.Rows() == 1);
  CHECK_FALSE(bank.Prepared("01"));
  CHECK_FALSE(bank.Prepared("02"));
}

TEST_CASE(
    "a rollback of a branch never prepared is SUCCESS, a commit of one is an error "
    "retried, never SUCCESS",
    "[sdk][xa][postgres]") {
  XaBank bank;
  CHECK(bank.Rollback("07").status.ok());
  BranchReply commit = bank.Commit("07");
  CHECK(commit.status.code() == StatusCode::kInternal);
  CHECK_THAT(commit.status.message(), Catch::Contains("not prepared"));
  // And a commit after a rollback: the changes are gone, which the answer must not hide.
  REQUIRE(bank.Action().status.ok());
  REQUIRE(bank.Rollback().status.ok());
  CHECK(bank.Commit().status.code() == StatusCode::kInternal);
  CHECK(bank.Rows() == 0);
}

TEST_CASE(
    "a registration the coordinator refuses rolls the prepared transaction back and "
    "answers FAILURE",
    "[sdk][xa][postgres]") {
  XaBank bank;
  bank.coordinator().Script(
      kRegister,
      {{409, R"({"dtm_result":"FAILURE","message":"gid g is aborting, expected prepared"})"}});
  BranchReply reply = bank.Action();
  CHECK(reply.status.code() == StatusCode::kConflict);
  CHECK_THAT(reply.status.message(),
             Catch::Contains("is aborting") && Catch::Contains("rolled back"));
  CHECK_FALSE(bank.Prepared());
  CHECK(bank.Rows() == 0);
  // The coordinator's own rollback may still come (it never stored the branch, but a retry
  // of a lost registration could have): nothing to do, SUCCESS.
  CHECK(bank.Rollback().status.ok());
}

TEST_CASE("a registration that gets no verdict rolls back too and answers an error",
          "[sdk][xa][postgres]") {
  XaBank bank;
  bank.coordinator().Script(kRegister, {{500, "internal error"}, {500, "internal error"}});
  BranchReply reply = bank.Action();
  CHECK(reply.status.code() == StatusCode::kUnavailable);
  CHECK_THAT(reply.status.message(), Catch::Contains("rolled back"));
  CHECK_FALSE(bank.Prepared());
  CHECK(bank.Rows() == 0);
}

TEST_CASE("a business error prepares and registers nothing, and is the branch's answer",
          "[sdk][xa][postgres]") {
  XaBank bank;
  BranchReply refused = bank.Action([](const XaRequest&, db::PgConnection& db) -> Status {
    if (Status s = db.Run("INSERT INTO transfer VALUES ('half-done', 1)"); !s.ok()) return s;
    return Status::Conflict("insufficient funds");
  });
  CHECK(refused.status.code() == StatusCode::kConflict);
  CHECK(refused.status.message() == "insufficient funds");

  BranchReply broken = bank.Action([](const XaRequest&, db::PgConnection& db) -> Status {
    return db.Run("INSERT INTO no_such_table VALUES (1)");
  });
  CHECK_FALSE(broken.status.ok());
  CHECK(broken.status.code() != StatusCode::kConflict);  // retried, not FAILURE

  BranchReply thrown = bank.Action(
      [](const XaRequest&, db::PgConnection&) -> Status { throw std::runtime_error("bug"); });
  CHECK(thrown.status.code() == StatusCode::kInternal);

  CHECK_FALSE(bank.Prepared());
  CHECK(bank.Rows() == 0);
  CHECK(bank.coordinator().CountCalls(kRegister) == 0);
  // Nothing was kept: the same branch can still run.
  CHECK(bank.Action().status.ok());
}

TEST_CASE("a duplicate action of a committed branch changes nothing and answers FAILURE",
          "[sdk][xa][postgres]") {
  XaBank bank;
  REQUIRE(bank.Action().status.ok());
  REQUIRE(bank.Commit().status.ok());
  int runs = 0;
  BranchReply again = bank.Action([&](const XaRequest& r, db::PgConnection& db) {
    ++runs;
    return Insert()(r, db);
  });
  CHECK(again.status.code() == StatusCode::kConflict);
  CHECK_THAT(again.status.message(), Catch::Contains("already been committed"));
  CHECK(runs == 0);
  CHECK(bank.Rows() == 1);
  CHECK(bank.coordinator().CountCalls(kRegister) == 1);
}

TEST_CASE(
    "a second call of a prepared branch waits for its phase 2, after the commit it runs "
    "nothing",
    "[sdk][xa][postgres]") {
  XaBank bank;
  REQUIRE(bank.Action().status.ok());
  std::atomic<int> runs{0};
  auto duplicate = std::async(std::launch::async, [&] {
    return bank.Action([&](const XaRequest& r, db::PgConnection& db) {
      ++runs;
      return Insert()(r, db);
    });
  });
  // The duplicate's barrier row waits on the prepared transaction's, which holds its lock.
  // (CHECK, not REQUIRE: the commit below must run, or the duplicate would wait forever.)
  CHECK(bank.WaitForLockWaiter());
  CHECK(bank.Commit().status.ok());
  BranchReply again = duplicate.get();
  CHECK(again.status.code() == StatusCode::kConflict);
  CHECK(runs == 0);
  CHECK(bank.Rows() == 1);
  CHECK_FALSE(bank.Prepared());
}

TEST_CASE("a participant restarted while a branch is prepared opens at once and can commit it",
          "[sdk][xa][postgres]") {
  XaBank bank;
  REQUIRE(bank.Action().status.ok());
  REQUIRE(bank.Prepared());
  // What a participant restarted after a crash does: the prepared branch holds a row of the
  // barrier table, which opening must not wait for (phase 2 needs the participant running).
  FakeClock clock;
  auto reopened = PostgresXa::Open(bank.conninfo(), bank.client(), clock);
  INFO(reopened.status().ToString());
  REQUIRE(reopened);
  XaRequest commit = bank.Request(XaOp::kCommit);
  CHECK((*reopened)->Phase2(commit).status.ok());
  CHECK_FALSE(bank.Prepared());
  CHECK(bank.Rows() == 1);
}

TEST_CASE("a gid and branch_id too long for a prepared transaction's name are refused by name",
          "[sdk][xa][postgres]") {
  CHECK(PostgresXa::PreparedTransactionName("g1", "01").value() == "settle-xa/g1/01");
  // 10 + 128 + 1 + 60 = 199 bytes: the longest name PostgreSQL takes.
  CHECK(PostgresXa::PreparedTransactionName(std::string(128, 'g'), std::string(60, 'b')).ok());
  auto too_long = PostgresXa::PreparedTransactionName(std::string(128, 'g'), std::string(61, 'b'));
  CHECK(too_long.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(too_long.status().message(), Catch::StartsWith("gid: "));
}

TEST_CASE(
    "mounted with OnXa: RunXa's branch is prepared and registered, the coordinator's "
    "commit makes it visible, and bad calls are refused naming the field",
    "[sdk][xa][postgres]") {
  XaBank bank;
  Participant participant;
  participant.OnXa("/api/TransOutXa", bank.xa().Handler(Insert()));
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string url = "http://127.0.0.1:" + std::to_string(*port) + "/api/TransOutXa";

  auto outcome = RunXa(bank.client(), bank.gid(), {}, [&](Xa& xa) {
    auto called = xa.CallBranch(R"({"amount":30})", url);
    return called ? Status::Ok() : called.status();
  });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  std::vector<std::string> routes;
  for (const auto& call : bank.coordinator().Calls()) routes.push_back(call.path);
  CHECK(routes == std::vector<std::string>{"/api/settle/prepare", kRegister, "/api/settle/submit"});
  REQUIRE(bank.Registrations().size() == 1);
  CHECK(bank.Registrations()[0].at("url") == url);
  CHECK(bank.Prepared());
  CHECK(bank.Rows() == 0);

  // Phase 2 as the coordinator makes it: a GET (the registration's data is empty).
  const std::string query = "?gid=" + bank.gid() + "&trans_type=xa&branch_id=01&op=commit";
  auto commit = bank.client().CallUrl(url + query, "", std::chrono::seconds(10));
  REQUIRE(commit);
  CHECK(commit->status == 200);
  CHECK(bank.Rows() == 1);
  auto again = bank.client().CallUrl(url + query, "", std::chrono::seconds(10));
  REQUIRE(again);
  CHECK(again->status == 200);

  auto missing =
      bank.client().CallUrl(url + "?gid=" + bank.gid() + "&trans_type=xa&branch_id=02&op=action",
                            "{}", std::chrono::seconds(10));
  REQUIRE(missing);
  CHECK(missing->status == 409);
  CHECK_THAT(missing->body, Catch::Contains("phase2_url: required"));
  auto bad_gid = bank.client().CallUrl(
      url + "?gid=bad%20gid&trans_type=xa&branch_id=02&op=action&phase2_url=" + url, "{}",
      std::chrono::seconds(10));
  REQUIRE(bad_gid);
  CHECK(bad_gid->status == 409);
  CHECK_THAT(bad_gid->body, Catch::Contains("gid: must be"));
  CHECK_FALSE(bank.Prepared("02"));
  CHECK(bank.Registrations().size() == 1);
}

}  // namespace
}  // namespace settle::sdk
