// Group commit's transaction logic, driven with groups chosen by the test (the writer thread
// forms groups from whatever is queued, which a test cannot choose).
#include "sqlite_batch_applier.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "record_builders.h"
#include "schema.h"
#include "settle/db/sqlite_connection.h"
#include "temp_dir.h"

namespace settle::storage::testing {
namespace {

using settle::testing::TempDir;

class Database {
 public:
  Database() {
    Result<std::unique_ptr<db::SqliteConnection>> c = db::SqliteConnection::Open(
        dir_.File("settle.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    REQUIRE(c);
    connection_ = std::move(c).value();
    REQUIRE(MigrateSchema(*connection_).ok());
  }

  db::SqliteConnection& connection() { return *connection_; }

  std::int64_t Count(const std::string& table) {
    Result<db::SqliteStatement> stmt = connection_->Prepare("SELECT count(*) FROM " + table);
    REQUIRE(stmt);
    REQUIRE(*stmt->Step());
    return stmt->ColumnInt64(0);
  }

  bool HasGlobal(const std::string& gid) {
    Result<db::SqliteStatement> stmt =
        connection_->Prepare("SELECT count(*) FROM trans_global WHERE gid = ?1");
    REQUIRE(stmt);
    stmt->BindText(1, gid);
    REQUIRE(*stmt->Step());
    return stmt->ColumnInt64(0) == 1;
  }

 private:
  TempDir dir_;
  std::unique_ptr<db::SqliteConnection> connection_;
};

TEST_CASE("a refused batch is rolled back alone while the rest of its group commits",
          "[storage][sqlite]") {
  Database db;
  SqliteBatchApplier applier(db.connection());
  const WriteBatch first =
      Batch(InsertGlobal{MakeGlobal("a")}, InsertBranch{MakeBranch("a", "01")});
  const WriteBatch refused =
      Batch(InsertGlobal{MakeGlobal("b")}, InsertBranch{MakeBranch("b", "01")},
            InsertGlobal{MakeGlobal("a")});
  const WriteBatch last = Batch(InsertGlobal{MakeGlobal("c")});
  const std::vector<const WriteBatch*> group = {&first, &refused, &last};

  SqliteBatchApplier::GroupResult result = applier.ApplyGroup(group);

  CHECK(result.committed);
  REQUIRE(result.statuses.size() == 3);
  CHECK(result.statuses[0].ok());
  CHECK(result.statuses[1].code() == StatusCode::kAlreadyExists);
  CHECK(result.statuses[2].ok());
  CHECK(db.HasGlobal("a"));
  CHECK_FALSE(db.HasGlobal("b"));
  CHECK(db.HasGlobal("c"));
  CHECK(db.Count("trans_branch_op") == 1);
  CHECK(!db.connection().InTransaction());
}

TEST_CASE("a batch of the group sees the batches before it", "[storage][sqlite]") {
  Database db;
  SqliteBatchApplier applier(db.connection());
  const WriteBatch insert = Batch(InsertGlobal{MakeGlobal("a")});
  const WriteBatch duplicate = Batch(InsertGlobal{MakeGlobal("a")});
  const WriteBatch branch = Batch(InsertBranch{MakeBranch("a", "01")});
  const std::vector<const WriteBatch*> group = {&insert, &duplicate, &branch};

  SqliteBatchApplier::GroupResult result = applier.ApplyGroup(group);

  CHECK(result.committed);
  CHECK(result.statuses[0].ok());
  CHECK(result.statuses[1].code() == StatusCode::kAlreadyExists);
  CHECK(result.statuses[2].ok());
}

TEST_CASE("a storage failure in one batch fails every batch of its group and stores nothing",
          "[storage][sqlite]") {
  Database db;
  SqliteBatchApplier applier(db.connection());
  // A database capped a few pages above its current size: a 1 MiB body cannot fit.
  const std::int64_t pages = [&] {
    Result<db::SqliteStatement> stmt = db.connection().Prepare("PRAGMA page_count");
    REQUIRE(stmt);
    REQUIRE(*stmt->Step());
    return stmt->ColumnInt64(0);
  }();
  REQUIRE(db.connection().Exec("PRAGMA max_page_count = " + std::to_string(pages + 8)).ok());
  BranchRecord huge = MakeBranch("b", "01");
  huge.data = std::string(1 << 20, 'x');
  const WriteBatch before = Batch(InsertGlobal{MakeGlobal("a")});
  const WriteBatch too_big = Batch(InsertGlobal{MakeGlobal("b")}, InsertBranch{huge});
  const WriteBatch after = Batch(InsertGlobal{MakeGlobal("c")});
  const std::vector<const WriteBatch*> group = {&before, &too_big, &after};

  SqliteBatchApplier::GroupResult result = applier.ApplyGroup(group);

  CHECK_FALSE(result.committed);
  REQUIRE(result.statuses.size() == 3);
  for (const Status& s : result.statuses) {
    CHECK(s.code() == StatusCode::kUnavailable);
    CHECK_THAT(s.message(), Catch::Contains("full"));
  }
  CHECK(db.Count("trans_global") == 0);
  CHECK(!db.connection().InTransaction());

  SECTION("and the next group starts a fresh transaction and commits") {
    const std::vector<const WriteBatch*> retry = {&before, &after};
    SqliteBatchApplier::GroupResult again = applier.ApplyGroup(retry);
    CHECK(again.committed);
    CHECK(again.statuses[0].ok());
    CHECK(again.statuses[1].ok());
    CHECK(db.HasGlobal("a"));
    CHECK(db.HasGlobal("c"));
  }
}

TEST_CASE("a record that cannot be stored refuses only its own batch", "[storage][sqlite]") {
  Database db;
  SqliteBatchApplier applier(db.connection());
  GlobalRecord bad = MakeGlobal("bad");
  bad.options.custom_data = "\xff\xfe not utf-8";
  const WriteBatch refused = Batch(InsertGlobal{bad});
  const WriteBatch fine = Batch(InsertGlobal{MakeGlobal("fine")});
  const std::vector<const WriteBatch*> group = {&refused, &fine};

  SqliteBatchApplier::GroupResult result = applier.ApplyGroup(group);

  CHECK(result.committed);
  CHECK(result.statuses[0].code() == StatusCode::kInvalidArgument);
  CHECK_THAT(result.statuses[0].message(), Catch::Contains("bad"));
  CHECK(result.statuses[1].ok());
  CHECK(db.HasGlobal("fine"));
}

}  // namespace
}  // namespace settle::storage::testing
