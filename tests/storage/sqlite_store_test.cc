// What SqliteStore promises beyond the Store contract: durability across reopen, the
// single-process lock, schema versions, refusing foreign files, and group commit.
#include "settle/storage/sqlite_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "record_builders.h"
#include "schema.h"
#include "settle/db/sqlite_connection.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace settle::storage::testing {
namespace {

using settle::testing::TempDir;

std::unique_ptr<SqliteStore> MustOpen(const std::string& path, SqliteStoreOptions options = {}) {
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path, options);
  INFO(store.status().ToString());
  REQUIRE(store);
  return std::move(store).value();
}

// A plain SQLite connection to the same file, beside the store (as an operator's sqlite3
// shell would be).
std::unique_ptr<db::SqliteConnection> RawConnection(const std::string& path) {
  Result<std::unique_ptr<db::SqliteConnection>> c =
      db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE, /*busy_timeout_ms=*/5000);
  INFO(c.status().ToString());
  REQUIRE(c);
  return std::move(c).value();
}

std::int64_t QueryInt(db::SqliteConnection& c, const std::string& sql) {
  Result<db::SqliteStatement> stmt = c.Prepare(sql);
  REQUIRE(stmt);
  Result<bool> row = stmt->Step();
  REQUIRE(row);
  REQUIRE(*row);
  return stmt->ColumnInt64(0);
}

TEST_CASE("closing and reopening the store keeps every transaction", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  GlobalRecord global = MakeGlobal("g1", TransType::kSaga, GlobalStatus::kSubmitted);
  global.options.orders = {{1, {0}}};
  global.options.branch_headers = {{"Authorization", "Bearer x"}};
  BranchRecord branch = MakeBranch("g1", "01", BranchOp::kAction);
  branch.data = std::string("bin\0ary\xff", 8);
  Transaction before;
  {
    auto store = MustOpen(path);
    REQUIRE(store->Commit(Batch(InsertGlobal{global}, InsertBranch{branch})).ok());
    REQUIRE(store->Commit(Batch(InsertGlobal{MakeGlobal("g2")})).ok());
    before = **store->Load("g1");
  }

  auto reopened = MustOpen(path);

  const Transaction after = **reopened->Load("g1");
  CHECK(after.global == before.global);
  CHECK(after.branches == before.branches);
  CHECK(reopened->List(ListQuery{})->transactions.size() == 2);
  SECTION("and new ids stay above the old ones") {
    REQUIRE(reopened->Commit(Batch(InsertGlobal{MakeGlobal("g3")})).ok());
    CHECK((*reopened->Load("g3"))->global.id > (*reopened->Load("g2"))->global.id);
  }
}

TEST_CASE("closing and reopening the store keeps every topic and its order", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  std::vector<Topic> before;
  {
    auto store = MustOpen(path);
    MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/1", "b", T0() + 1s)},
                             Subscribe{"orders", MakeSubscriber("http://a/2", "a", T0())},
                             Subscribe{"billing", MakeSubscriber("http://a/2")}));
    MustCommit(*store, Batch(Unsubscribe{"orders", "http://b/1"}));
    MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://b/1", "b again")}));
    before = MustListTopics(*store);
  }

  auto reopened = MustOpen(path);

  CHECK(MustListTopics(*reopened) == before);
  REQUIRE(before.size() == 2);
  CHECK(Urls(MustSubscribers(*reopened, "orders")) ==
        std::vector<std::string>{"http://a/2", "http://b/1"});
  SECTION("and a new subscriber comes after the old ones") {
    MustCommit(*reopened, Batch(Subscribe{"orders", MakeSubscriber("http://0/first-by-name")}));
    CHECK(Urls(MustSubscribers(*reopened, "orders")) ==
          std::vector<std::string>{"http://a/2", "http://b/1", "http://0/first-by-name"});
  }
}

TEST_CASE("closing and reopening the store keeps every job where it stood",
          "[storage][sqlite][jobs]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  BulkJob job = MakeJob("j1");
  job.reason = std::string("bin\0ary\xff", 8);
  {
    auto store = MustOpen(path);
    MustCommit(*store, Batch(InsertJob{job}));
    MustCommit(*store,
               Batch(AdvanceJob{
                   .id = "j1", .expected_cursor = 100, .cursor = 90, .acted = 1, .at = T0() + 1s}));
  }

  auto reopened = MustOpen(path);

  job.cursor = 90;
  job.acted = 1;
  job.updated_at = T0() + 1s;
  CHECK(MustLoadJob(*reopened, "j1") == job);
  CHECK(MustListJobs(*reopened, 10, true) == std::vector<BulkJob>{job});
}

TEST_CASE("closing the store folds the WAL into the database file", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    auto store = MustOpen(path);
    REQUIRE(store->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).ok());
  }

  const std::filesystem::path wal = path + "-wal";
  CHECK((!std::filesystem::exists(wal) || std::filesystem::file_size(wal) == 0));
}

TEST_CASE("Open creates missing parent directories", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("a/b/c/settle.db");

  auto store = MustOpen(path);

  CHECK(std::filesystem::exists(path));
  CHECK(store->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).ok());
}

TEST_CASE("a new database is at the schema version of this binary", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  MustOpen(path).reset();

  auto raw = RawConnection(path);

  CHECK(QueryInt(*raw, "PRAGMA user_version") == SqliteStore::SchemaVersion());
  CHECK(SqliteStore::SchemaVersion() >= 1);
}

TEST_CASE("a version 1 database is migrated with every transaction and branch kept",
          "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    // The file as the first release wrote it: branch rows keyed by gid.
    Result<std::unique_ptr<db::SqliteConnection>> raw =
        db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(raw);
    REQUIRE(MigrateSchema(**raw, 1).ok());
    REQUIRE(
        (*raw)
            ->Exec(
                "INSERT INTO trans_global (gid, trans_type, status, options, create_time, "
                "update_time, next_cron_time) VALUES "
                "('old-1', 'saga', 'submitted', '{}', 1000, 2000, 3000), "
                "('old-2', 'tcc', 'succeed', '{}', 1100, 2100, NULL);"
                "INSERT INTO trans_branch_op (gid, branch_id, op, seq, url, data, status, "
                "create_time, update_time, attempts, failures, last_error, next_retry_at) "
                "VALUES "
                "('old-1', '01', 'action', 1, 'http://a/x', X'00ff', 'succeed', 1, 2, 1, 0, '', 5),"
                "('old-1', '02', 'action', 2, 'http://a/y', 'y', 'prepared', 1, 2, 3, 2, 'e', 9),"
                "('old-2', '01', 'confirm', 0, 'http://b/c', '', 'succeed', 1, 2, 1, 0, '', 5);")
            .ok());
    REQUIRE(QueryInt(**raw, "PRAGMA user_version") == 1);
  }

  auto store = MustOpen(path);
  const Transaction one = **store->Load("old-1");
  const Transaction two = **store->Load("old-2");

  CHECK(QueryInt(*RawConnection(path), "PRAGMA user_version") == SqliteStore::SchemaVersion());
  CHECK(one.global.status == GlobalStatus::kSubmitted);
  REQUIRE(one.branches.size() == 2);
  CHECK(one.branches[0].gid == "old-1");
  CHECK(one.branches[0].data == std::string("\0\xff", 2));
  CHECK(one.branches[1].branch_id == "02");
  CHECK(one.branches[1].url == "http://a/y");
  CHECK(one.branches[1].status == BranchStatus::kPrepared);
  CHECK(one.branches[1].attempts == 3);
  CHECK(one.branches[1].failures == 2);
  CHECK(one.branches[1].last_error == "e");
  REQUIRE(two.branches.size() == 1);
  CHECK(two.branches[0].op == BranchOp::kConfirm);
  // The migrated rows take part in writes like new ones.
  BranchRecord retried = one.branches[1];
  retried.status = BranchStatus::kSucceed;
  CHECK(store->Commit(Batch(UpdateBranch{retried, BranchStatus::kPrepared})).ok());
  CHECK((*store->Load("old-1"))->branches[1].status == BranchStatus::kSucceed);
  CHECK(store->Commit(Batch(InsertBranch{MakeBranch("old-2", "02", BranchOp::kConfirm)})).ok());
  CHECK((*store->Load("old-2"))->branches.size() == 2);
}

TEST_CASE("a version 4 database gains topics with every transaction kept", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    // The file as the release before topics left it: version 4, a saga with two branch rows.
    Result<std::unique_ptr<db::SqliteConnection>> raw =
        db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(raw);
    REQUIRE(MigrateSchema(**raw, 4).ok());
    REQUIRE(
        (*raw)
            ->Exec("INSERT INTO trans_global (gid, trans_type, status, options, create_time, "
                   "update_time, next_cron_time) VALUES "
                   "('old-1', 'saga', 'submitted', '{}', 1000, 2000, 3000);"
                   "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, "
                   "status, create_time, update_time, attempts, failures, last_error, "
                   "next_retry_at, failed_attempts) VALUES "
                   "(1, '01', 'action', 1, 'http://a/x', X'00ff', 'succeed', 1, 2, 1, 0, '', 5, "
                   "''),"
                   "(1, '02', 'action', 2, 'http://a/y', 'y', 'prepared', 1, 2, 3, 2, 'e', 9, "
                   "'');")
            .ok());
    REQUIRE(QueryInt(**raw, "PRAGMA user_version") == 4);
    REQUIRE(QueryInt(**raw,
                     "SELECT count(*) FROM sqlite_master WHERE name = "
                     "'topic_subscriber'") == 0);
  }

  auto store = MustOpen(path);

  CHECK(QueryInt(*RawConnection(path), "PRAGMA user_version") == SqliteStore::SchemaVersion());
  const Transaction old = MustLoad(*store, "old-1");
  CHECK(old.global.status == GlobalStatus::kSubmitted);
  REQUIRE(old.branches.size() == 2);
  CHECK(old.branches[0].data == std::string("\0\xff", 2));
  CHECK(old.branches[1].attempts == 3);
  CHECK(old.branches[1].last_error == "e");
  CHECK(MustListTopics(*store).empty());
  MustCommit(*store, Batch(Subscribe{"orders", MakeSubscriber("http://a/notify")}));
  CHECK(Urls(MustSubscribers(*store, "orders")) == std::vector<std::string>{"http://a/notify"});
  // The migrated transaction takes part in writes as before.
  BranchRecord retried = old.branches[1];
  retried.status = BranchStatus::kSucceed;
  MustCommit(*store, Batch(UpdateBranch{retried, BranchStatus::kPrepared}));
  CHECK(MustLoad(*store, "old-1").branches[1].status == BranchStatus::kSucceed);
}

TEST_CASE("a version 6 database gains creators: its transactions and topics are nobody's",
          "[storage][sqlite][tenancy]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    // The file as the release before owners left it: a prepared TCC and a topic.
    Result<std::unique_ptr<db::SqliteConnection>> raw =
        db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(raw);
    REQUIRE(MigrateSchema(**raw, 6).ok());
    REQUIRE((*raw)
                ->Exec("INSERT INTO trans_global (gid, trans_type, status, options, create_time, "
                       "update_time, next_cron_time) VALUES "
                       "('old-1', 'tcc', 'prepared', '{}', 1000, 2000, 3000);"
                       "INSERT INTO topic_subscriber (topic, url, remark, create_time) VALUES "
                       "('orders', 'http://a/notify', '', 1000);")
                .ok());
    REQUIRE(QueryInt(**raw, "PRAGMA user_version") == 6);
  }

  auto store = MustOpen(path);

  CHECK(QueryInt(*RawConnection(path), "PRAGMA user_version") == SqliteStore::SchemaVersion());
  CHECK(MustLoad(*store, "old-1").global.creator.empty());
  // Every caller may act on it and list it, as before.
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
}

TEST_CASE(
    "a version 5 database marks the transactions an operator force-stopped, and finds the TCC "
    "the timeout/registration race left uncancelled",
    "[storage][sqlite][repair]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    // Two failed TCCs with a cancel never made, as the release before left them: one an
    // operator stopped while it rolled back, one the race left.
    Result<std::unique_ptr<db::SqliteConnection>> raw =
        db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(raw);
    REQUIRE(MigrateSchema(**raw, 5).ok());
    REQUIRE((*raw)
                ->Exec("INSERT INTO trans_global (gid, trans_type, status, options, create_time, "
                       "update_time, finish_time, rollback_reason) VALUES "
                       "('stopped', 'tcc', 'failed', '{}', 1000, 2000, 2000, 'timeout_to_fail: "
                       "x; then stopped by an operator (forceStop by ops): by hand'),"
                       "('raced', 'tcc', 'failed', '{}', 1000, 2000, 2000, 'timeout_to_fail: x');"
                       "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, "
                       "status, create_time, update_time, attempts, failures, last_error, "
                       "next_retry_at, failed_attempts) VALUES "
                       "(1, '01', 'cancel', 0, 'http://a/c', '', 'prepared', 1, 2, 0, 0, '', 5, "
                       "''),"
                       "(2, '01', 'cancel', 0, 'http://a/c', '', 'prepared', 1, 2, 0, 0, '', 5, "
                       "'');")
                .ok());
  }

  auto store = MustOpen(path);

  CHECK(MustLoad(*store, "stopped").global.force_stopped);
  CHECK_FALSE(MustLoad(*store, "raced").global.force_stopped);
  const auto undone = store->ListUndoneRollbacks(FromUnixMillis(0), 0, 10).value();
  REQUIRE(undone.size() == 1);
  CHECK(undone[0].gid == "raced");
}

TEST_CASE("a version 7 database keeps every branch body when bodies become shared",
          "[storage][sqlite][shared-body]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    // The file as the release before shared bodies left it: a saga step's two rows, each with
    // its own copy of the body.
    Result<std::unique_ptr<db::SqliteConnection>> raw =
        db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(raw);
    REQUIRE(MigrateSchema(**raw, 7).ok());
    REQUIRE(
        (*raw)
            ->Exec("INSERT INTO trans_global (gid, trans_type, status, options, create_time, "
                   "update_time, next_cron_time) VALUES "
                   "('old-1', 'saga', 'submitted', '{}', 1000, 2000, 3000);"
                   "INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, "
                   "status, create_time, update_time, next_retry_at) VALUES "
                   "(1, '01', 'action', 0, 'http://a/do', x'00ff01', 'prepared', 1, 1, 1),"
                   "(1, '01', 'compensate', 0, 'http://a/undo', x'00ff01', 'prepared', 1, 1, 1);")
            .ok());
  }

  auto store = MustOpen(path);

  const Transaction old = MustLoad(*store, "old-1");
  REQUIRE(old.branches.size() == 2);
  CHECK(old.branches[0].data == std::string("\0\xff\x01", 3));
  CHECK(old.branches[1].data == std::string("\0\xff\x01", 3));
  // A new saga's two rows keep their body once; the old ones keep theirs as they were.
  const SharedBytes body(std::string(2000, 'b'));
  BranchRecord action = MakeBranch("new-1", "01", BranchOp::kAction);
  action.data = body;
  BranchRecord compensate = MakeBranch("new-1", "01", BranchOp::kCompensate);
  compensate.data = body;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("new-1", TransType::kSaga)},
                           InsertBranch{action}, InsertBranch{compensate}));
  CHECK(MustLoad(*store, "new-1").branches == std::vector<BranchRecord>{action, compensate});
  auto raw = RawConnection(path);
  CHECK(QueryInt(*raw, "SELECT sum(length(body)) FROM trans_branch_op") == 3 + 3 + 2000);
  CHECK(QueryInt(*raw,
                 "SELECT count(*) FROM trans_branch_op WHERE body_of_branch = '01' "
                 "AND body_of_op = 'action'") == 1);
}

TEST_CASE("a version 11 database gains spans: its transactions load with none",
          "[storage][sqlite][trace]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    // The file as the release before spans left it: a prepared TCC of service-a's.
    Result<std::unique_ptr<db::SqliteConnection>> raw =
        db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(raw);
    REQUIRE(MigrateSchema(**raw, 11).ok());
    REQUIRE((*raw)
                ->Exec("INSERT INTO trans_global (gid, trans_type, status, options, create_time, "
                       "update_time, next_cron_time, creator) VALUES "
                       "('old-1', 'tcc', 'prepared', '{}', 1000, 2000, 3000, 'service-a');")
                .ok());
  }

  auto store = MustOpen(path);

  CHECK(QueryInt(*RawConnection(path), "PRAGMA user_version") == SqliteStore::SchemaVersion());
  const GlobalRecord old = MustLoad(*store, "old-1").global;
  CHECK(old.trace.empty());
  CHECK(old.creator == "service-a");
  CHECK(MustList(*store, ListQuery{}).transactions.at(0).trace.empty());
  // It takes part in writes as before, and keeps no span.
  GlobalRecord submitted = old;
  submitted.status = GlobalStatus::kSubmitted;
  MustCommit(*store, Batch(UpdateGlobal{submitted, GlobalStatus::kPrepared}));
  CHECK(MustLoad(*store, "old-1").global == submitted);
  // A new transaction keeps its span, as its traceparent.
  GlobalRecord traced = MakeGlobal("new-1");
  traced.trace.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  traced.trace.span_id = "00f067aa0ba902b7";
  traced.trace.parent_id = "b7ad6b7169203331";
  traced.trace.flags = 0x01;
  traced.trace.state = "k=v,x=y";
  MustCommit(*store, Batch(InsertGlobal{traced}));
  CHECK(MustLoad(*store, "new-1").global.trace == traced.trace);
  CHECK(QueryInt(*RawConnection(path),
                 "SELECT count(*) FROM trans_global WHERE gid = 'new-1' AND "
                 "trace = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' AND "
                 "trace_parent = 'b7ad6b7169203331' AND trace_state = 'k=v,x=y'") == 1);
}

TEST_CASE("a database written by a newer schema version is refused, naming both versions",
          "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  MustOpen(path).reset();
  const int newer = SqliteStore::SchemaVersion() + 1;
  REQUIRE(RawConnection(path)->Exec("PRAGMA user_version = " + std::to_string(newer)).ok());

  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);

  REQUIRE_FALSE(store);
  CHECK(store.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(store.status().message(),
             Catch::Contains(std::to_string(newer)) &&
                 Catch::Contains(std::to_string(SqliteStore::SchemaVersion())));
  CHECK(QueryInt(*RawConnection(path), "PRAGMA user_version") == newer);
}

TEST_CASE("a file that is not an SQLite database is refused by name as damaged, unchanged",
          "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "this is not a database, just some text\n";
  }

  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);

  REQUIRE_FALSE(store);
  // Nothing a restart cures: settled exits 2 on it (docs/operations.md, "A damaged database").
  CHECK(store.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(store.status().message(), Catch::Contains("the database '" + path + "' is damaged") &&
                                           Catch::Contains("not a database"));
  std::ifstream in(path, std::ios::binary);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept.size() == 200 * std::string("this is not a database, just some text\n").size());
}

TEST_CASE("a second Open of the same file fails while the first store is open",
          "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  auto first = MustOpen(path);

  Result<std::unique_ptr<SqliteStore>> second = SqliteStore::Open(path);

  REQUIRE_FALSE(second);
  CHECK(second.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(second.status().message(),
             Catch::Contains(path) && Catch::Contains("in use by another process"));
  CHECK(first->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).ok());

  SECTION("and succeeds once the first is destroyed") {
    first.reset();
    auto third = MustOpen(path);
    CHECK((*third->Load("g1")).has_value());
  }
}

TEST_CASE("the file lock holds across processes and dies with its holder", "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  int ready[2];
  REQUIRE(pipe(ready) == 0);

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child opens the store, says so, and waits to be killed.
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
    const char byte = store ? 'y' : 'n';
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char byte = 0;
  const ssize_t got = read(ready[0], &byte, 1);
  close(ready[0]);
  Result<std::unique_ptr<SqliteStore>> while_held = SqliteStore::Open(path);
  // Killed before any REQUIRE can end the test, so that no child outlives it.
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);

  REQUIRE(got == 1);
  REQUIRE(byte == 'y');
  CHECK_FALSE(while_held);
  CHECK(while_held.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(while_held.status().message(), Catch::Contains("in use by another process"));
  auto after_death = MustOpen(path);
  CHECK(after_death->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).ok());
}

TEST_CASE("a lone commit is one SQLite commit of one batch", "[storage][sqlite]") {
  TempDir dir;
  auto store = MustOpen(dir.File("settle.db"));

  REQUIRE(store->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).ok());
  CHECK(store->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).code() == StatusCode::kAlreadyExists);

  const SqliteStoreStats stats = store->Stats();
  CHECK(stats.commits == 2);
  CHECK(stats.batches == 2);
  CHECK(stats.failed_commits == 0);
}

TEST_CASE("concurrent commits share SQLite commits (group commit)", "[storage][sqlite]") {
  TempDir dir;
  auto store = MustOpen(dir.File("settle.db"));
  constexpr int kThreads = 16;
  constexpr int kPerThread = 200;
  std::vector<int> failures(kThreads, 0);
  RunTogether(kThreads, [&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      const std::string gid = ThreadGid(t, i);
      if (!store->Commit(Batch(InsertGlobal{MakeGlobal(gid)}, InsertBranch{MakeBranch(gid, "01")}))
               .ok()) {
        ++failures[t];
      }
    }
  });

  for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);
  const SqliteStoreStats stats = store->Stats();
  CHECK(stats.batches == kThreads * kPerThread);
  CHECK(stats.commits < stats.batches);
  CHECK(stats.failed_commits == 0);
  for (int t = 0; t < kThreads; ++t) {
    const std::string gid = ThreadGid(t, kPerThread - 1);
    CHECK((*store->Load(gid)).has_value());
  }
}

TEST_CASE("under steady load the writer waits for company, an idle store never waits",
          "[storage][sqlite]") {
  TempDir dir;
  SqliteStoreOptions options;
  options.commit_delay = std::chrono::milliseconds(20);  // far longer than a thread's wake-up
  auto store = MustOpen(dir.File("settle.db"), options);

  // One caller at a time: nobody is queued when a commit ends.
  for (int i = 0; i < 10; ++i) {
    REQUIRE(store->Commit(Batch(InsertGlobal{MakeGlobal("alone-" + std::to_string(i))})).ok());
  }
  CHECK(store->Stats().delayed_commits == 0);

  // Eight callers committing back to back: callers queue while a commit runs, and the
  // writer waits before the next.
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20;
  std::vector<int> failures(kThreads, 0);
  RunTogether(kThreads, [&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      if (!store->Commit(Batch(InsertGlobal{MakeGlobal(ThreadGid(t, i))})).ok()) ++failures[t];
    }
  });

  for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);
  CHECK(store->Stats().delayed_commits > 0);
}

TEST_CASE("checkpoints run beside the writer and keep the WAL bounded under steady commits",
          "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  SqliteStoreOptions options;
  options.checkpoint_pages = 8;
  options.writer_checkpoint_pages = 64;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 150;
  {
    auto store = MustOpen(path, options);
    std::vector<int> failures(kThreads, 0);
    RunTogether(kThreads, [&](int t) {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string gid = ThreadGid(t, i);
        BranchRecord branch = MakeBranch(gid, "01");
        branch.data = std::string(3000, 'd');  // about a page per transaction
        if (!store->Commit(Batch(InsertGlobal{MakeGlobal(gid)}, InsertBranch{branch})).ok()) {
          ++failures[t];
        }
      }
    });

    for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);
    const SqliteStoreStats stats = store->Stats();
    CHECK(stats.wal_pages_written >= kThreads * kPerThread);
    CHECK(stats.background_checkpoints >= 1);
    // The WAL file keeps the largest size it reached: the WAL started over rather than hold
    // everything written. How far past the writer's limit it got depends on how long a
    // background checkpoint held it (a starved thread holds it longer), so the bound is half
    // of what was written, not a number of commits.
    const std::uintmax_t page_frame = 4096 + 24;
    CHECK(std::filesystem::file_size(path + "-wal") < kThreads * kPerThread * page_frame / 2);
  }
  auto reopened = MustOpen(path);
  CHECK(QueryInt(*RawConnection(path), "SELECT count(*) FROM trans_global") ==
        kThreads * kPerThread);
  CHECK((*reopened->Load(ThreadGid(kThreads - 1, kPerThread - 1)))->branches.size() == 1);
}

TEST_CASE(
    "when the database cannot be written, every waiting caller gets Unavailable and "
    "later commits succeed again",
    "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  SqliteStoreOptions options;
  options.busy_timeout_ms = 0;  // fail at once instead of waiting for the lock
  auto store = MustOpen(path, options);
  // Another connection holds the write lock, so the writer's BEGIN IMMEDIATE fails (BUSY).
  auto intruder = RawConnection(path);
  REQUIRE(intruder->Exec("BEGIN IMMEDIATE").ok());

  constexpr int kCallers = 8;
  std::vector<Status> results(kCallers);
  std::latch start(kCallers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = store->Commit(Batch(InsertGlobal{MakeGlobal("g" + std::to_string(i))}));
    });
  }
  for (std::thread& thread : threads) thread.join();

  for (const Status& s : results) {
    CHECK(s.code() == StatusCode::kUnavailable);
    CHECK_THAT(s.message(), Catch::Contains("locked"));
  }
  CHECK(store->Stats().failed_commits >= 1);
  CHECK(store->List(ListQuery{})->transactions.empty());

  REQUIRE(intruder->Exec("ROLLBACK").ok());
  CHECK(store->Commit(Batch(InsertGlobal{MakeGlobal("after")})).ok());
  CHECK((*store->Load("after")).has_value());
}

}  // namespace
}  // namespace settle::storage::testing
