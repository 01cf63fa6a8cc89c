// The Store contract for bulk jobs (write_batch.h InsertJob, AdvanceJob, CancelJob,
// DeleteJobsBefore; Store::LoadJob, ListJobs): a job is stored with every byte, a step is a
// compare-and-set on its cursor that commits with the action it takes or not at all, a cancel
// stops a running job, and retention deletes the old jobs that no longer run. These tests run
// against the store that store_factory.h makes, whatever its implementation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "record_builders.h"
#include "settle/storage/store.h"
#include "store_factory.h"
#include "store_test_util.h"

namespace settle::storage::testing {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> Ids(const std::vector<BulkJob>& jobs) {
  std::vector<std::string> ids;
  for (const BulkJob& j : jobs) ids.push_back(j.id);
  return ids;
}

// j1's first step: from its cursor 100 to 90, one transaction acted on.
AdvanceJob FirstStep() {
  return AdvanceJob{.id = "j1", .expected_cursor = 100, .cursor = 90, .acted = 1, .at = T0() + 1s};
}

TEST_CASE("a job is stored with every byte and loaded back as it was", "[storage][jobs]") {
  TestStore store;
  BulkJob odd = MakeJob("j1");
  odd.actor = std::string("bin\0ary \xff", 9);
  odd.filter = std::string(R"({"gid_prefix":"\xfe\xff"})");
  odd.parameters = R"({"url":"http://new:8081"})";
  odd.reason = "reason\nwith a newline and \xc3\xa9 and \x80";
  odd.last_skip = "gid g0 is \xff";
  MustCommit(*store, Batch(InsertJob{odd}));

  CHECK(MustLoadJob(*store, "j1") == odd);
  CHECK(MustListJobs(*store, 10, false) == std::vector<BulkJob>{odd});
  const auto unknown = store->LoadJob("nobody");
  REQUIRE(unknown);
  CHECK_FALSE(unknown->has_value());
}

TEST_CASE("a job id already taken is refused with AlreadyExists, and its batch leaves no trace",
          "[storage][jobs]") {
  TestStore store;
  MustCommit(*store, Batch(InsertJob{MakeJob("j1")}));
  BulkJob again = MakeJob("j1", T0() + 1s);
  again.action = "pause";

  const Status refused = store->Commit(Batch(InsertGlobal{MakeGlobal("g1")}, InsertJob{again}));

  CHECK(refused.code() == StatusCode::kAlreadyExists);
  CHECK_THAT(refused.message(), Catch::Contains("job j1"));
  CHECK(MustLoadJob(*store, "j1") == MakeJob("j1"));
  const auto g1 = store->Load("g1");
  REQUIRE(g1);
  CHECK_FALSE(g1->has_value());
}

TEST_CASE("a step moves the cursor and the counts, and a step from a cursor that moved is refused",
          "[storage][jobs]") {
  TestStore store;
  MustCommit(*store, Batch(InsertJob{MakeJob("j1")}));
  MustCommit(*store, Batch(FirstStep()));

  BulkJob expected = MakeJob("j1");
  expected.cursor = 90;
  expected.acted = 1;
  expected.updated_at = T0() + 1s;
  CHECK(MustLoadJob(*store, "j1") == expected);

  // Another run that read the job before the step takes it again: refused, nothing changes.
  AdvanceJob stale = FirstStep();
  stale.cursor = 80;
  stale.at = T0() + 2s;
  const Status moved = store->Commit(Batch(stale));
  CHECK(moved.code() == StatusCode::kConflict);
  CHECK_THAT(moved.message(), Catch::Contains("job j1 moved on"));
  CHECK(MustLoadJob(*store, "j1") == expected);

  // A skip records why; a later step without one keeps it.
  MustCommit(*store, Batch(AdvanceJob{.id = "j1",
                                      .expected_cursor = 90,
                                      .cursor = 80,
                                      .skipped = 1,
                                      .last_skip = "gid g80 is succeed, already finished",
                                      .at = T0() + 3s}));
  MustCommit(*store, Batch(AdvanceJob{.id = "j1",
                                      .expected_cursor = 80,
                                      .cursor = 70,
                                      .acted = 1,
                                      .state = JobState::kDone,
                                      .at = T0() + 4s}));
  expected.cursor = 70;
  expected.acted = 2;
  expected.skipped = 1;
  expected.last_skip = "gid g80 is succeed, already finished";
  expected.state = JobState::kDone;
  expected.updated_at = T0() + 4s;
  CHECK(MustLoadJob(*store, "j1") == expected);

  // Done: no further step, even from its cursor.
  const Status done = store->Commit(
      Batch(AdvanceJob{.id = "j1", .expected_cursor = 70, .cursor = 60, .at = T0() + 5s}));
  CHECK(done.code() == StatusCode::kConflict);
  CHECK_THAT(done.message(), Catch::Contains("job j1 moved on"));
  CHECK(MustLoadJob(*store, "j1") == expected);

  const Status unknown = store->Commit(Batch(AdvanceJob{.id = "nobody", .expected_cursor = 100}));
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK_THAT(unknown.message(), Catch::Contains("job nobody not found"));
}

TEST_CASE("a step commits with the action it takes, or neither does", "[storage][jobs]") {
  TestStore store;
  MustCommit(*store, Batch(InsertGlobal{MakeGlobal("g1")}, InsertJob{MakeJob("j1")}));
  AuditEntry audit;
  audit.at = T0() + 1s;
  audit.actor = "on-call";
  audit.action = "pause";
  audit.gid = "g1";
  audit.parameters = "{}";
  const Pause pause{T0() + 1s, "on-call", "bulk pause"};

  SECTION("an action refused leaves the step untaken") {
    const Status refused = store->Commit(Batch(RetryNow{"nobody", T0() + 1s}, FirstStep()));
    CHECK(refused.code() == StatusCode::kNotFound);
    CHECK(MustLoadJob(*store, "j1") == MakeJob("j1"));
    const Status after = store->Commit(Batch(FirstStep(), RetryNow{"nobody", T0() + 1s}));
    CHECK(after.code() == StatusCode::kNotFound);
    CHECK(MustLoadJob(*store, "j1") == MakeJob("j1"));
  }
  SECTION("a step refused leaves the action and its audit untaken") {
    MustCommit(*store, Batch(FirstStep()));
    const Status refused =
        store->Commit(Batch(PauseGlobal{"g1", pause}, RecordAudit{audit}, FirstStep()));
    CHECK(refused.code() == StatusCode::kConflict);
    CHECK_FALSE(MustLoad(*store, "g1").global.paused);
    const auto entries = store->ListAudit(AuditQuery{});
    REQUIRE(entries);
    CHECK(entries->entries.empty());
    CHECK(MustLoadJob(*store, "j1").cursor == 90);
  }
  SECTION("both taken") {
    MustCommit(*store, Batch(PauseGlobal{"g1", pause}, RecordAudit{audit}, FirstStep()));
    CHECK(MustLoad(*store, "g1").global.paused == pause);
    CHECK(MustLoadJob(*store, "j1").cursor == 90);
    const auto entries = store->ListAudit(AuditQuery{});
    REQUIRE(entries);
    CHECK(entries->entries.size() == 1);
  }
}

TEST_CASE("a cancel stops a running job, and a job that is not running is not cancelled",
          "[storage][jobs]") {
  TestStore store;
  MustCommit(*store, Batch(InsertJob{MakeJob("j1")}, InsertJob{MakeJob("j2")}));
  MustCommit(*store, Batch(CancelJob{"j1", T0() + 5s}));

  BulkJob cancelled = MakeJob("j1");
  cancelled.state = JobState::kCancelled;
  cancelled.updated_at = T0() + 5s;
  CHECK(MustLoadJob(*store, "j1") == cancelled);
  const Status step = store->Commit(Batch(FirstStep()));
  CHECK(step.code() == StatusCode::kConflict);
  CHECK_THAT(step.message(), Catch::Contains("job j1 moved on"));
  const Status again = store->Commit(Batch(CancelJob{"j1", T0() + 6s}));
  CHECK(again.code() == StatusCode::kConflict);
  CHECK_THAT(again.message(), Catch::Contains("job j1 is cancelled, not running"));
  CHECK(MustLoadJob(*store, "j1") == cancelled);

  MustCommit(*store, Batch(AdvanceJob{.id = "j2",
                                      .expected_cursor = 100,
                                      .cursor = 0,
                                      .state = JobState::kDone,
                                      .at = T0() + 7s}));
  const Status done = store->Commit(Batch(CancelJob{"j2", T0() + 8s}));
  CHECK(done.code() == StatusCode::kConflict);
  CHECK_THAT(done.message(), Catch::Contains("job j2 is done, not running"));
  CHECK(MustLoadJob(*store, "j2").state == JobState::kDone);

  const Status unknown = store->Commit(Batch(CancelJob{"nobody", T0()}));
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK_THAT(unknown.message(), Catch::Contains("job nobody not found"));
}

TEST_CASE("jobs are listed the latest created first, the running ones alone on request",
          "[storage][jobs]") {
  TestStore store;
  MustCommit(*store, Batch(InsertJob{MakeJob("b", T0() + 1s)}, InsertJob{MakeJob("a", T0())}));
  MustCommit(*store, Batch(InsertJob{MakeJob("d", T0() + 3s)}, InsertJob{MakeJob("c", T0() + 2s)}));
  MustCommit(*store, Batch(CancelJob{"d", T0() + 4s}));

  CHECK(Ids(MustListJobs(*store, 10, false)) == std::vector<std::string>{"d", "c", "b", "a"});
  CHECK(Ids(MustListJobs(*store, 2, false)) == std::vector<std::string>{"d", "c"});
  CHECK(Ids(MustListJobs(*store, 10, true)) == std::vector<std::string>{"c", "b", "a"});
  CHECK(Ids(MustListJobs(*store, 1, true)) == std::vector<std::string>{"c"});
  CHECK(Ids(MustListJobs(*store, 1000, false)).size() == 4);
  for (std::size_t bad : {std::size_t{0}, std::size_t{1001}}) {
    const auto refused = store->ListJobs(bad, false);
    REQUIRE_FALSE(refused);
    CHECK(refused.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(refused.status().message(), Catch::Contains("limit"));
  }
}

TEST_CASE("retention deletes the jobs that no longer run, last updated before the cutoff",
          "[storage][jobs]") {
  TestStore store;
  MustCommit(*store, Batch(InsertJob{MakeJob("old-done")}, InsertJob{MakeJob("old-cancelled")},
                           InsertJob{MakeJob("old-running")}, InsertJob{MakeJob("new-done")}));
  MustCommit(*store, Batch(AdvanceJob{.id = "old-done",
                                      .expected_cursor = 100,
                                      .cursor = 0,
                                      .state = JobState::kDone,
                                      .at = T0() + 1s},
                           CancelJob{"old-cancelled", T0() + 1s},
                           AdvanceJob{.id = "new-done",
                                      .expected_cursor = 100,
                                      .cursor = 0,
                                      .state = JobState::kDone,
                                      .at = T0() + 2h}));

  MustCommit(*store, Batch(DeleteJobsBefore{T0() + 2h}));

  // A running job stays however old; one updated at the cutoff itself stays too.
  std::vector<std::string> left = Ids(MustListJobs(*store, 10, false));
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"new-done", "old-running"});
  const auto deleted = store->LoadJob("old-done");
  REQUIRE(deleted);
  CHECK_FALSE(deleted->has_value());
}

}  // namespace
}  // namespace settle::storage::testing
