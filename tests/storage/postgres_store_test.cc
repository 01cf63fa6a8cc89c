// What PostgresStore adds to the Store contract: bytes that PostgreSQL's text refuses, a
// server that drops its connections, several coordinators on one database, and schema
// versions.
#include "settle/storage/postgres_store.h"

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "pg_schema.h"
#include "postgres_test_database.h"
#include "record_builders.h"
#include "settle/db/pg_connection.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

using settle::testing::PostgresTestDatabase;

std::unique_ptr<PostgresStore> MustOpen(const std::string& conninfo,
                                        PostgresStoreOptions options = {}) {
  Result<std::unique_ptr<PostgresStore>> opened = PostgresStore::Open(conninfo, options);
  INFO(opened.status().ToString());
  REQUIRE(opened);
  return std::move(opened).value();
}

std::string EveryByte() {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  return bytes;
}

TEST_CASE("bodies, errors and reasons keep every byte, NUL and invalid UTF-8 included",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  auto store = MustOpen(database.conninfo());
  GlobalRecord global = MakeGlobal("bytes", TransType::kSaga, GlobalStatus::kAborting);
  global.rollback_reason = "step 1 answered \xff\xfe\x00!" + EveryByte();
  global.options.custom_data = std::string("{\"k\":\"\\u0000\"}");
  BranchRecord branch = MakeBranch("bytes", "01", BranchOp::kAction, 0);
  branch.data = EveryByte() + EveryByte();
  branch.last_error = std::string("HTTP 500: \x00\xc3\x28", 14);
  branch.failed_attempts = {{T0(), std::string("\x00 refused", 9)}};
  MustCommit(*store, Batch(InsertGlobal{global}, InsertBranch{branch}));

  Transaction loaded = MustLoad(*store, "bytes");

  CHECK(loaded.global.rollback_reason == global.rollback_reason);
  CHECK(loaded.global.options == global.options);
  REQUIRE(loaded.branches.size() == 1);
  CHECK(loaded.branches[0].data == branch.data);
  CHECK(loaded.branches[0].last_error == branch.last_error);
  CHECK(loaded.branches[0].failed_attempts == branch.failed_attempts);
}

TEST_CASE("a gid that PostgreSQL text cannot hold is refused for its batch alone",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  auto store = MustOpen(database.conninfo());

  for (const std::string& gid : {std::string("nul\0gid", 7), std::string("bad-utf8-\xff")}) {
    Status refused = store->Commit(Batch(InsertGlobal{MakeGlobal(gid)}));
    INFO(refused.ToString());
    CHECK(refused.code() == StatusCode::kInvalidArgument);
  }

  // The store goes on: the refusal rolled back to its savepoint, not the connection.
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("after")}));
  CHECK(MustLoad(*store, "after").global.gid == "after");
}

TEST_CASE("after the server ends every connection, the store connects again",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  auto store = MustOpen(database.conninfo());
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("before")}));
  MustLoad(*store, "before");

  // What a server restart or failover does to the coordinator's connections.
  database.Admin(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" +
      database.schema() + "'");

  // The first use of a dead connection fails (Unavailable: the caller retries), and the next
  // connects again. Nothing is lost and nothing is half-written.
  Status first = store->Commit(Batch(InsertGlobal{MakeGlobal("during")}));
  INFO(first.ToString());
  CHECK((first.ok() || first.code() == StatusCode::kUnavailable));
  if (!first.ok()) MustCommit(*store, Batch(InsertGlobal{MakeGlobal("during")}));
  Result<std::optional<Transaction>> read = store->Load("before");
  if (!read) read = store->Load("before");  // the reader's pooled connection died too
  INFO(read.status().ToString());
  REQUIRE(read);
  CHECK(read->has_value());
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("after")}));
  CHECK(MustLoad(*store, "during").global.gid == "during");
  CHECK(MustLoad(*store, "after").global.gid == "after");
}

TEST_CASE("coordinators that open one database together migrate it once and share it",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  std::vector<std::unique_ptr<PostgresStore>> stores(4);
  std::vector<Status> opened(stores.size());
  RunTogether(static_cast<int>(stores.size()), [&](int i) {
    Result<std::unique_ptr<PostgresStore>> store =
        PostgresStore::Open(database.conninfo(), {.exclusive = false});
    opened[i] = store ? Status::Ok() : store.status();
    if (store) stores[i] = std::move(store).value();
  });
  for (const Status& s : opened) {
    INFO(s.ToString());
    REQUIRE(s.ok());
  }

  MustCommit(*stores[0], Batch(InsertGlobal{MakeGlobal("shared")}));
  // Another coordinator sees it at once, and its own insert of the same gid is refused.
  CHECK(MustLoad(*stores[3], "shared").global.gid == "shared");
  CHECK(stores[2]->Commit(Batch(InsertGlobal{MakeGlobal("shared")})).code() ==
        StatusCode::kAlreadyExists);
}

TEST_CASE("an exclusive store refuses a second one on its database until it closes",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  auto first = MustOpen(database.conninfo());

  Result<std::unique_ptr<PostgresStore>> second = PostgresStore::Open(database.conninfo());

  REQUIRE_FALSE(second);
  CHECK(second.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(second.status().message(), Catch::Contains("another settled"));
  first.reset();
  MustOpen(database.conninfo());
}

TEST_CASE(
    "a transaction is driven by the instance that claimed it until that instance's lease "
    "runs out",
    "[storage][postgres][leases]") {
  PostgresTestDatabase database;
  auto a = MustOpen(database.conninfo(), {.exclusive = false});
  auto b = MustOpen(database.conninfo(), {.exclusive = false});
  GlobalRecord g = MakeGlobal("leased", TransType::kSaga, GlobalStatus::kSubmitted);
  g.next_cron_time = T0();
  MustCommit(*a, Batch(InsertGlobal{g}));
  REQUIRE(a->leases().Renew("a", std::chrono::minutes(1)).ok());
  REQUIRE(b->leases().Renew("b", std::chrono::minutes(1)).ok());
  const auto claimable = [](PostgresStore& store, const std::string& instance) {
    Result<std::vector<DueEntry>> due = store.leases().ListClaimable(instance, T0(), T0(), 10);
    REQUIRE(due);
    std::vector<std::string> gids;
    for (const DueEntry& e : *due) gids.push_back(e.gid);
    return gids;
  };
  // Unowned: either may claim it, but a poll leaves it to its creator for a while.
  CHECK(claimable(*b, "b") == std::vector<std::string>{"leased"});
  Result<std::vector<DueEntry>> too_fresh =
      b->leases().ListClaimable("b", T0(), T0() - std::chrono::seconds(1), 10);
  REQUIRE(too_fresh);
  CHECK(too_fresh->empty());

  REQUIRE(*a->leases().Claim("leased", "a"));

  CHECK_FALSE(*b->leases().Claim("leased", "b"));
  CHECK(claimable(*b, "b").empty());
  CHECK(claimable(*a, "a") == std::vector<std::string>{"leased"});
  CHECK(*a->leases().Claim("leased", "a"));  // claiming one's own again is fine

  // a stops renewing: once its lease has run out (here at once), b takes over.
  REQUIRE(a->leases().Renew("a", Duration(0)).ok());
  CHECK(claimable(*b, "b") == std::vector<std::string>{"leased"});
  CHECK(*b->leases().Claim("leased", "b"));
  CHECK_FALSE(*a->leases().Claim("leased", "a"));
}

TEST_CASE("a released instance's transactions are claimable at once, unknown gids are NotFound",
          "[storage][postgres][leases]") {
  PostgresTestDatabase database;
  auto a = MustOpen(database.conninfo(), {.exclusive = false});
  auto b = MustOpen(database.conninfo(), {.exclusive = false});
  MustCommit(*a, Batch(InsertGlobal{MakeGlobal("g1")}));
  REQUIRE(a->leases().Renew("a", std::chrono::minutes(1)).ok());
  REQUIRE(*a->leases().Claim("g1", "a"));
  REQUIRE_FALSE(*b->leases().Claim("g1", "b"));

  REQUIRE(a->leases().Release("a").ok());

  CHECK(*b->leases().Claim("g1", "b"));
  Result<bool> unknown = b->leases().Claim("ghost", "b");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.status().code() == StatusCode::kNotFound);
}

TEST_CASE("a database migrated by a newer Settle is refused, naming both versions",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  MustOpen(database.conninfo()).reset();
  database.Admin("UPDATE " + database.schema() + ".settle_schema SET version = 99");

  Result<std::unique_ptr<PostgresStore>> opened = PostgresStore::Open(database.conninfo());

  REQUIRE_FALSE(opened);
  CHECK(opened.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(
      opened.status().message(),
      Catch::Contains("99") && Catch::Contains(std::to_string(PostgresStore::SchemaVersion())));
}

TEST_CASE("topics outlive the store that wrote them, in the same order", "[storage][postgres]") {
  PostgresTestDatabase database;
  std::vector<Topic> before;
  {
    auto store = MustOpen(database.conninfo());
    MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/1", "b", T0() + 1s)},
                             Subscribe{"orders", MakeSubscriber("http://a/2", "a", T0())},
                             Subscribe{"billing", MakeSubscriber("http://a/2")}));
    MustCommit(*store, Batch(Unsubscribe{"orders", "http://b/1"}));
    MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/1", "b again")}));
    before = MustListTopics(*store);
  }

  auto reopened = MustOpen(database.conninfo());

  CHECK(MustListTopics(*reopened) == before);
  CHECK(Urls(MustSubscribers(*reopened, "orders")) ==
        std::vector<std::string>{"http://a/2", "http://b/1"});
}

TEST_CASE("jobs outlive the store that wrote them, where they stood", "[storage][postgres][jobs]") {
  PostgresTestDatabase database;
  BulkJob job = MakeJob("j1");
  job.reason = EveryByte();
  {
    auto store = MustOpen(database.conninfo());
    MustCommit(*store, Batch(InsertJob{job}));
    MustCommit(*store,
               Batch(AdvanceJob{
                   .id = "j1", .expected_cursor = 100, .cursor = 90, .acted = 1, .at = T0() + 1s}));
  }

  auto reopened = MustOpen(database.conninfo());

  job.cursor = 90;
  job.acted = 1;
  job.updated_at = T0() + 1s;
  CHECK(MustLoadJob(*reopened, "j1") == job);
  CHECK(MustListJobs(*reopened, 10, true) == std::vector<BulkJob>{job});
}

TEST_CASE("a topic or url that PostgreSQL text cannot hold is refused for its batch alone",
          "[storage][postgres]") {
  PostgresTestDatabase database;
  auto store = MustOpen(database.conninfo());

  const Status nul =
      store->Commit(Batch(Subscribe{std::string("or\0ders", 7), MakeSubscriber("http://a/1")}));
  const Status utf8 = store->Commit(Batch(Subscribe{"orders", MakeSubscriber("http://a/\xff")}));

  CHECK(nul.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(nul.message(), Catch::Contains("topic"));
  CHECK(utf8.code() == StatusCode::kInvalidArgument);
  CHECK(MustListTopics(*store).empty());
}

TEST_CASE("a version 3 database gains topics with every transaction kept", "[storage][postgres]") {
  PostgresTestDatabase database;
  {
    // The database as the release before topics left it: version 3, a saga with a branch row.
    Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
    INFO(raw.status().ToString());
    REQUIRE(raw);
    REQUIRE(MigratePgSchema(**raw, 3).ok());
    const Status inserted = (*raw)->Run(
        "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
        "rollback_reason, next_cron_time) "
        "VALUES ('old-1', 'saga', 'submitted', '{}'::bytea, 1000, 2000, ''::bytea, 3000);"
        "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, status, "
        "create_time, update_time, attempts, failures, last_error, next_retry_at, "
        "failed_attempts) "
        "SELECT id, '01', 'action', 1, 'http://a/x', '\\x00ff'::bytea, 'prepared', 1, 2, 3, 2, "
        "'e'::bytea, 9, ''::bytea FROM trans_global WHERE gid = 'old-1'");
    INFO(inserted.ToString());
    REQUIRE(inserted.ok());
    Result<int> version = ReadPgSchemaVersion(**raw);
    REQUIRE(version);
    REQUIRE(*version == 3);
  }

  auto store = MustOpen(database.conninfo());

  const Transaction old = MustLoad(*store, "old-1");
  CHECK(old.global.status == GlobalStatus::kSubmitted);
  REQUIRE(old.branches.size() == 1);
  CHECK(old.branches[0].data == std::string("\0\xff", 2));
  CHECK(old.branches[0].attempts == 3);
  CHECK(MustListTopics(*store).empty());
  // Topic and transaction operations share a batch, and the old ones work as before.
  BranchRecord done = old.branches[0];
  done.status = BranchStatus::kSucceed;
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/notify")},
                           UpdateBranch{done, BranchStatus::kPrepared}));
  CHECK(Urls(MustSubscribers(*store, "orders")) == std::vector<std::string>{"http://a/notify"});
  CHECK(MustLoad(*store, "old-1").branches[0].status == BranchStatus::kSucceed);
  CHECK(store->Commit(Batch(InsertGlobal{MakeGlobal("old-1")})).code() ==
        StatusCode::kAlreadyExists);
}

TEST_CASE(
    "a version 4 database marks the transactions an operator force-stopped, and finds the TCC "
    "the timeout/registration race left uncancelled",
    "[storage][postgres][repair]") {
  PostgresTestDatabase database;
  {
    Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
    INFO(raw.status().ToString());
    REQUIRE(raw);
    REQUIRE(MigratePgSchema(**raw, 4).ok());
    const Status inserted = (*raw)->Run(
        "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
        "finish_time, rollback_reason) VALUES "
        "('stopped', 'tcc', 'failed', '{}'::bytea, 1000, 2000, 2000, "
        "'stopped by an operator (forceStop by ops): by hand'::bytea),"
        "('raced', 'tcc', 'failed', '{}'::bytea, 1000, 2000, 2000, 'timeout_to_fail'::bytea);"
        "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, status, "
        "create_time, update_time, attempts, failures, last_error, next_retry_at, "
        "failed_attempts) "
        "SELECT id, '01', 'cancel', 0, 'http://a/c', ''::bytea, 'prepared', 1, 2, 0, 0, "
        "''::bytea, 5, ''::bytea FROM trans_global");
    INFO(inserted.ToString());
    REQUIRE(inserted.ok());
  }

  auto store = MustOpen(database.conninfo());

  CHECK(MustLoad(*store, "stopped").global.force_stopped);
  CHECK_FALSE(MustLoad(*store, "raced").global.force_stopped);
  const auto undone = store->ListUndoneRollbacks(FromUnixMillis(0), 0, 10).value();
  REQUIRE(undone.size() == 1);
  CHECK(undone[0].gid == "raced");
}

TEST_CASE("a version 5 database gains creators: its transactions and topics are nobody's",
          "[storage][postgres][tenancy]") {
  PostgresTestDatabase database;
  {
    // The database as the release before owners left it: a prepared TCC and a topic.
    Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
    INFO(raw.status().ToString());
    REQUIRE(raw);
    REQUIRE(MigratePgSchema(**raw, 5).ok());
    const Status inserted = (*raw)->Run(
        "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
        "rollback_reason, next_cron_time) "
        "VALUES ('old-1', 'tcc', 'prepared', '{}'::bytea, 1000, 2000, ''::bytea, 3000);"
        "INSERT INTO topic_subscriber (topic, url, remark, create_time) "
        "VALUES ('orders', 'http://a/notify', ''::bytea, 1000)");
    INFO(inserted.ToString());
    REQUIRE(inserted.ok());
  }

  auto store = MustOpen(database.conninfo());

  CHECK(MustLoad(*store, "old-1").global.creator.empty());
  CHECK(store
            ->Commit(
                Batch(ExpectCreator{"old-1", "service-b"}, InsertBranch{MakeBranch("old-1", "01")}))
            .ok());
  ListQuery mine;
  mine.creator = "service-b";
  CHECK(Gids(MustList(*store, mine)) == std::vector<std::string>{"old-1"});
  CHECK(store->UnfinishedUsage(std::nullopt)->empty());
  CHECK(MustListTopics(*store).at(0).creator().empty());
  CHECK(store
            ->Commit(Batch(ExpectTopicCreator{"orders", "service-b"},
                           Subscribe{"orders", MakeSubscriber("http://b/notify")}))
            .ok());
  // New rows carry their creator, as a version 5 coordinator's would not.
  GlobalRecord owned = MakeGlobal("new-1");
  owned.creator = "service-a";
  MustCommit(*store, Batch(InsertGlobal{owned}));
  CHECK(MustLoad(*store, "new-1").global.creator == "service-a");
}

TEST_CASE("a version 6 database keeps every branch body when bodies become shared",
          "[storage][postgres][shared-body]") {
  PostgresTestDatabase database;
  {
    // The database as the release before shared bodies left it: a saga step's two rows, each
    // with its own copy of the body.
    Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
    INFO(raw.status().ToString());
    REQUIRE(raw);
    REQUIRE(MigratePgSchema(**raw, 6).ok());
    const Status inserted = (*raw)->Run(
        "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
        "rollback_reason, next_cron_time) "
        "VALUES ('old-1', 'saga', 'submitted', '{}'::bytea, 1000, 2000, ''::bytea, 3000);"
        "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, status, "
        "create_time, update_time, attempts, failures, last_error, next_retry_at, "
        "failed_attempts) SELECT id, '01', op, 0, 'http://a/' || op, '\\x00ff01'::bytea, "
        "'prepared', 1, 1, 0, 0, ''::bytea, 1, ''::bytea FROM trans_global, "
        "(VALUES ('action'), ('compensate')) AS ops (op)");
    INFO(inserted.ToString());
    REQUIRE(inserted.ok());
  }

  auto store = MustOpen(database.conninfo());

  const Transaction old = MustLoad(*store, "old-1");
  REQUIRE(old.branches.size() == 2);
  CHECK(old.branches[0].data == std::string("\0\xff\x01", 3));
  CHECK(old.branches[1].data == std::string("\0\xff\x01", 3));
  const SharedBytes body(std::string(2000, 'b'));
  BranchRecord action = MakeBranch("new-1", "01", BranchOp::kAction);
  action.data = body;
  BranchRecord compensate = MakeBranch("new-1", "01", BranchOp::kCompensate);
  compensate.data = body;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("new-1", TransType::kSaga)},
                           InsertBranch{action}, InsertBranch{compensate}));
  CHECK(MustLoad(*store, "new-1").branches == std::vector<BranchRecord>{action, compensate});
  Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
  REQUIRE(raw);
  Result<db::PgResult> stored = (*raw)->Query(
      "SELECT sum(octet_length(body)), count(*) FILTER (WHERE body_of_branch = '01' "
      "AND body_of_op = 'action') FROM trans_branch_op");
  INFO(stored.status().ToString());
  REQUIRE(stored);
  CHECK(stored->Int(0, 0) == 3 + 3 + 2000);
  CHECK(stored->Int(0, 1) == 1);
}

TEST_CASE("a version 11 database gains spans: its transactions load with none",
          "[storage][postgres][trace]") {
  PostgresTestDatabase database;
  {
    // The database as the release before spans left it: a prepared TCC of service-a's.
    Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
    INFO(raw.status().ToString());
    REQUIRE(raw);
    REQUIRE(MigratePgSchema(**raw, 11).ok());
    const Status inserted = (*raw)->Run(
        "INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time, "
        "rollback_reason, next_cron_time, creator) "
        "VALUES ('old-1', 'tcc', 'prepared', '{}'::bytea, 1000, 2000, ''::bytea, 3000, "
        "'service-a')");
    INFO(inserted.ToString());
    REQUIRE(inserted.ok());
  }

  auto store = MustOpen(database.conninfo());

  const GlobalRecord old = MustLoad(*store, "old-1").global;
  CHECK(old.trace.empty());
  CHECK(old.creator == "service-a");
  CHECK(MustList(*store, ListQuery{}).transactions.at(0).trace.empty());
  // It takes part in writes as before, and keeps no span.
  GlobalRecord submitted = old;
  submitted.status = GlobalStatus::kSubmitted;
  MustCommit(*store, Batch(UpdateGlobal{submitted, GlobalStatus::kPrepared}));
  CHECK(MustLoad(*store, "old-1").global == submitted);
  // A coordinator of the previous version, still running, inserts as it did ('ig'): no span.
  Result<std::unique_ptr<db::PgConnection>> raw = db::PgConnection::Open(database.conninfo());
  REQUIRE(raw);
  Result<db::PgResult> applied = (*raw)->Query(
      "SELECT settle_apply_group($1::jsonb)::text",
      db::PgParams().Text(
          R"([[{"t":"ig","gid":"old-2","tt":"saga","st":"submitted","opt":"7b7d","ct":1000,)"
          R"("ut":2000,"ft":null,"rt":null,"rr":"","nc":3000,"sk":0,"fs":0,"cr":"service-b"}]])"));
  INFO(applied.status().ToString());
  REQUIRE(applied);
  CHECK(applied->Text(0, 0) == "[null]");
  const GlobalRecord old_coordinators = MustLoad(*store, "old-2").global;
  CHECK(old_coordinators.creator == "service-b");
  CHECK(old_coordinators.trace.empty());
  // A new transaction keeps its span, as its traceparent.
  GlobalRecord traced = MakeGlobal("new-1");
  traced.creator = "service-a";
  traced.trace.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  traced.trace.span_id = "00f067aa0ba902b7";
  traced.trace.parent_id = "b7ad6b7169203331";
  traced.trace.flags = 0x01;
  traced.trace.state = "k=v,x=y";
  MustCommit(*store, Batch(InsertGlobal{traced}));
  const GlobalRecord loaded = MustLoad(*store, "new-1").global;
  CHECK(loaded.trace == traced.trace);
  CHECK(loaded.creator == "service-a");
  Result<db::PgResult> stored = (*raw)->Query(
      "SELECT trace, trace_parent, trace_state FROM trans_global WHERE gid = 'new-1'");
  INFO(stored.status().ToString());
  REQUIRE(stored);
  CHECK(stored->Text(0, 0) == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  CHECK(stored->Text(0, 1) == "b7ad6b7169203331");
  CHECK(stored->Text(0, 2) == "k=v,x=y");
}

TEST_CASE("an unreachable server is Unavailable at open, with libpq's reason",
          "[storage][postgres]") {
  Result<std::unique_ptr<PostgresStore>> opened =
      PostgresStore::Open("host=127.0.0.1 port=1 dbname=x connect_timeout=2");

  REQUIRE_FALSE(opened);
  CHECK(opened.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(opened.status().message(), Catch::Contains("connecting"));
}

}  // namespace
}  // namespace settle::storage::testing
