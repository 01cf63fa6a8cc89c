// Bulk actions as stored jobs (drive/bulk_jobs.h): a job acts on the transactions its filter
// matched when it started, each at most once, each action audited with the job's id in the
// same commit as the job's step; it skips what changed meanwhile and says why; after a crash
// it resumes from its cursor, a second run of it takes no step twice, and a cancelled job takes
// none.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator_harness.h"
#include "saga_requests.h"
#include "settle/drive/bulk_jobs.h"
#include "sync_coordinator.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::RunCoroutine;
using testing::Saga;
using testing::Unknown;

// `count` sagas g1..gN whose one action keeps failing: submitted, retrying.
void SubmitRetrying(CoordinatorHarness& h, const std::string& prefix, int count) {
  for (int i = 1; i <= count; ++i) {
    h.caller().Script("01", BranchOp::kAction, {Unknown()});
    REQUIRE(h.coordinator().Submit(Saga(prefix + std::to_string(i), 1)).ok());
    REQUIRE(h.StatusOf(prefix + std::to_string(i)) == GlobalStatus::kSubmitted);
  }
}

BulkRequest Bulk(BulkAction action, std::string gid_prefix) {
  BulkRequest r;
  r.action = action;
  r.filter.gid_prefix = std::move(gid_prefix);
  r.actor = "on-call";
  r.reason = "ledger bug, OPS-12";
  return r;
}

storage::BulkJob MustStart(CoordinatorHarness& h, BulkRequest request) {
  auto job = RunCoroutine(h.context(), h.jobs().Start(std::move(request)));
  INFO(job.status().ToString());
  REQUIRE(job);
  return *job;
}

storage::BulkJob MustGet(CoordinatorHarness& h, const std::string& id) {
  auto job = h.store().LoadJob(id);
  REQUIRE(job);
  REQUIRE(job->has_value());
  return **job;
}

// How many audit entries of `action` each gid has, and which job each names.
struct Audited {
  std::map<std::string, int> per_gid;
  std::map<std::string, std::string> job_of;
};
Audited AuditOf(CoordinatorHarness& h, std::string_view action) {
  storage::AuditQuery q;
  q.action = std::string(action);
  q.limit = 1000;
  auto page = h.store().ListAudit(q);
  REQUIRE(page);
  Audited audited;
  for (const storage::AuditEntry& e : page->entries) {
    ++audited.per_gid[e.gid];
    const auto parameters = nlohmann::json::parse(e.parameters);
    audited.job_of[e.gid] = parameters.value("job", "");
  }
  return audited;
}

// Makes the `nth` commit from now and every later one fail (Unavailable), as a crash would cut
// them.
void FailCommitsFrom(CoordinatorHarness& h, int nth) {
  auto left = std::make_shared<int>(nth);
  auto hook = std::make_shared<std::function<void()>>();
  *hook = [&h, left, hook] {
    if (--*left <= 0) {
      h.faulty_store().FailCommits(true);
      return;
    }
    h.faulty_store().BeforeNextCommit(*hook);
  };
  h.faulty_store().BeforeNextCommit(*hook);
}

// Makes `count` commits fail (Unavailable), from the `nth` from now on; the later ones pass.
void FailCommitsBetween(CoordinatorHarness& h, int nth, int count) {
  auto passing = std::make_shared<int>(nth - 1);
  auto failing = std::make_shared<int>(count);
  auto hook = std::make_shared<std::function<void()>>();
  *hook = [&h, passing, failing, hook] {
    if (*passing > 0) {
      --*passing;
    } else if (*failing > 0) {
      --*failing;
      h.faulty_store().FailCommits(true);
    } else {
      h.faulty_store().FailCommits(false);
      return;
    }
    h.faulty_store().BeforeNextCommit(*hook);
  };
  h.faulty_store().BeforeNextCommit(*hook);
}

TEST_CASE("a bulk pause acts on each matching transaction once, audited with its job",
          "[coordinator][bulk]") {
  CoordinatorHarness h;
  SubmitRetrying(h, "ord-", 5);
  SubmitRetrying(h, "other-", 1);
  REQUIRE(h.coordinator().Submit(Saga("ord-done", 1)).ok());
  REQUIRE(h.coordinator().Pause("ord-3").ok());

  auto plan = RunCoroutine(h.context(), h.jobs().DryRun(Bulk(BulkAction::kPause, "ord-")));
  REQUIRE(plan);
  CHECK(plan->matched == 6);
  CHECK(plan->complete);
  REQUIRE(plan->sample.size() == 6);
  CHECK(plan->sample.front().gid == "ord-done");  // the latest first
  CHECK_FALSE(h.Load("ord-1").global.paused);     // a dry run changes nothing

  BulkRequest no_reason = Bulk(BulkAction::kPause, "ord-");
  no_reason.reason.clear();
  CHECK(RunCoroutine(h.context(), h.jobs().Start(no_reason)).status().code() ==
        StatusCode::kInvalidArgument);

  const storage::BulkJob started = MustStart(h, Bulk(BulkAction::kPause, "ord-"));
  CHECK(started.matched == 6);
  const storage::BulkJob job = MustGet(h, started.id);
  CHECK(job.state == storage::JobState::kDone);
  CHECK(job.acted == 4);
  CHECK(job.skipped == 2);  // ord-3 was paused already, ord-done finished
  CHECK(job.cursor == 0);
  CHECK_FALSE(job.last_skip.empty());
  for (const char* gid : {"ord-1", "ord-2", "ord-4", "ord-5"}) {
    const storage::Transaction tx = h.Load(gid);
    REQUIRE(tx.global.paused);
    CHECK(tx.global.paused->by == "on-call");
    CHECK(tx.global.paused->reason == "ledger bug, OPS-12");
  }
  CHECK_FALSE(h.Load("other-1").global.paused);

  const Audited paused = AuditOf(h, storage::kAuditPause);
  for (const char* gid : {"ord-1", "ord-2", "ord-4", "ord-5"}) {
    CHECK(paused.per_gid.at(gid) == 1);
    CHECK(paused.job_of.at(gid) == job.id);
  }
  CHECK(paused.per_gid.at("ord-3") == 1);  // the operator's own pause, no job
  CHECK(paused.job_of.at("ord-3").empty());
  // The job's own entry: who started it, on what, and why.
  storage::AuditQuery bulk;
  bulk.action = std::string(storage::kAuditBulk);
  auto entries = h.store().ListAudit(bulk);
  REQUIRE(entries);
  REQUIRE(entries->entries.size() == 1);
  CHECK(entries->entries[0].target == job.id);
  CHECK(entries->entries[0].actor == "on-call");
}

TEST_CASE("a job cut short by a crash resumes from its cursor and acts on none twice",
          "[coordinator][bulk]") {
  CoordinatorHarness h;
  SubmitRetrying(h, "g", 12);
  // The job's insert, then five actions, then every commit fails: as if settled died there.
  FailCommitsFrom(h, 7);
  const storage::BulkJob started = MustStart(h, Bulk(BulkAction::kPause, "g"));
  storage::BulkJob cut = MustGet(h, started.id);
  CHECK(cut.state == storage::JobState::kRunning);
  CHECK(cut.acted == 5);
  h.faulty_store().FailCommits(false);
  // A transaction created since is not the job's: it started before it existed.
  SubmitRetrying(h, "g-late-", 1);

  h.Restart();
  auto resumed = h.jobs().ResumeAll();
  REQUIRE(resumed);
  CHECK(*resumed == 1);
  h.Drain();
  const storage::BulkJob job = MustGet(h, started.id);
  CHECK(job.state == storage::JobState::kDone);
  CHECK(job.acted == 12);
  CHECK(job.skipped == 0);
  Audited paused = AuditOf(h, storage::kAuditPause);
  for (int i = 1; i <= 12; ++i) {
    const std::string gid = "g" + std::to_string(i);
    CHECK(paused.per_gid[gid] == 1);
    CHECK(h.Load(gid).global.paused);
  }
  CHECK_FALSE(h.Load("g-late-1").global.paused);
  CHECK(paused.per_gid.count("g-late-1") == 0);
}

TEST_CASE("a job whose storage fails for a while waits it out and goes on by itself",
          "[coordinator][bulk]") {
  CoordinatorHarness h;
  SubmitRetrying(h, "g", 8);
  // As settled runs jobs: storage that is unavailable is waited out (here 5 ms, doubling).
  BulkJobs patient(h.async_store(), h.raw_coordinator(), h.clock(), h.context().get_executor(), 0,
                   Duration(5));
  // The job's insert and two steps pass, the next three commits fail, then storage is back.
  FailCommitsBetween(h, 4, 3);
  auto started = RunCoroutine(h.context(), patient.Start(Bulk(BulkAction::kPause, "g")));
  REQUIRE(started);
  const storage::BulkJob job = MustGet(h, started->id);
  CHECK(job.state == storage::JobState::kDone);
  CHECK(job.acted == 8);
  CHECK(job.skipped == 0);
  Audited paused = AuditOf(h, storage::kAuditPause);
  for (int i = 1; i <= 8; ++i) CHECK(paused.per_gid["g" + std::to_string(i)] == 1);
  CHECK_FALSE(patient.Running(started->id));
}

TEST_CASE("two runs of one job, as on two instances, take each step once", "[coordinator][bulk]") {
  CoordinatorHarness h;
  SubmitRetrying(h, "g", 30);
  FailCommitsFrom(h, 3);  // the job is stored and takes one step, then stops
  const storage::BulkJob started = MustStart(h, Bulk(BulkAction::kForceStop, "g"));
  h.faulty_store().FailCommits(false);
  REQUIRE(MustGet(h, started.id).acted == 1);

  // Both runs start before either takes a step: each reads the same cursor.
  BulkJobs other(h.async_store(), h.raw_coordinator(), h.clock(), h.context().get_executor());
  REQUIRE(h.jobs().ResumeAll());
  REQUIRE(other.ResumeAll());
  h.Drain();
  const storage::BulkJob job = MustGet(h, started.id);
  CHECK(job.state == storage::JobState::kDone);
  CHECK(job.acted == 30);
  const Audited stopped = AuditOf(h, storage::kAuditForceStop);
  CHECK(stopped.per_gid.size() == 30);
  for (const auto& [gid, count] : stopped.per_gid) {
    INFO(gid);
    CHECK(count == 1);
    CHECK(h.StatusOf(gid) == GlobalStatus::kFailed);
  }
}

TEST_CASE("a cancelled job takes no further step, and cannot be resumed", "[coordinator][bulk]") {
  CoordinatorHarness h;
  SubmitRetrying(h, "g", 6);
  FailCommitsFrom(h, 4);  // stored, then two steps
  const storage::BulkJob started = MustStart(h, Bulk(BulkAction::kPause, "g"));
  h.faulty_store().FailCommits(false);
  REQUIRE(RunCoroutine(h.context(), h.jobs().Cancel(started.id, "on-call", "wrong filter")).ok());
  auto again = RunCoroutine(h.context(), h.jobs().Resume(started.id, "on-call", "oops"));
  CHECK(again.status().code() == StatusCode::kConflict);
  const Status twice = RunCoroutine(h.context(), h.jobs().Cancel(started.id, "on-call", "x"));
  CHECK(twice.code() == StatusCode::kConflict);
  const Status no_reason = RunCoroutine(h.context(), h.jobs().Cancel(started.id, "on-call", ""));
  CHECK(no_reason.code() == StatusCode::kInvalidArgument);
  CHECK(RunCoroutine(h.context(), h.jobs().Cancel("job-none", "on-call", "x")).code() ==
        StatusCode::kNotFound);
  h.Restart();
  auto resumed = h.jobs().ResumeAll();
  REQUIRE(resumed);
  CHECK(*resumed == 0);
  h.Drain();
  const storage::BulkJob job = MustGet(h, started.id);
  CHECK(job.state == storage::JobState::kCancelled);
  CHECK(job.acted == 2);
  int paused = 0;
  for (int i = 1; i <= 6; ++i) paused += h.Load("g" + std::to_string(i)).global.paused ? 1 : 0;
  CHECK(paused == 2);
}

TEST_CASE("a bulk redirect moves every pending call on a host, and only those",
          "[coordinator][bulk]") {
  CoordinatorHarness h;
  for (const std::string gid : {"m1", "m2"}) {
    engine::SubmitRequest r = Saga(gid, 2);
    r.steps[0] = {"http://Old-Bank:8080/api/out?acct=7", "http://old-bank:8080/api/back"};
    r.steps[1] = {"http://other:8080/in", "http://other:8080/undo"};
    h.caller().Script("01", BranchOp::kAction, {Unknown()});
    REQUIRE(h.coordinator().Submit(r).ok());
  }
  BulkRequest redirect = Bulk(BulkAction::kRedirect, "m");
  redirect.filter.gid_prefix.reset();
  redirect.from = "http://old-bank:8080";
  redirect.to = "https://new-bank:9443";
  auto plan = RunCoroutine(h.context(), h.jobs().DryRun(redirect));
  REQUIRE(plan);
  CHECK(plan->matched == 2);
  const storage::BulkJob started = MustStart(h, redirect);
  const storage::BulkJob job = MustGet(h, started.id);
  CHECK(job.acted == 2);
  for (const char* gid : {"m1", "m2"}) {
    std::map<std::string, std::string> urls;
    for (const storage::BranchRecord& b : h.Load(gid).branches) {
      urls[b.branch_id + ":" + std::string(ToString(b.op))] = b.url;
    }
    // Called at once on the new host (the scripted participant now answers success).
    CHECK(urls["01:action"] == "https://new-bank:9443/api/out?acct=7");
    CHECK(urls["01:compensate"] == "https://new-bank:9443/api/back");
    CHECK(urls["02:action"] == "http://other:8080/in");
  }
  const Audited redirected = AuditOf(h, storage::kAuditRedirect);
  CHECK(redirected.job_of.at("m1") == job.id);
}

TEST_CASE("bulk retry now and resume act through the coordinator's own actions",
          "[coordinator][bulk]") {
  CoordinatorHarness h;
  SubmitRetrying(h, "g", 3);
  for (int i = 1; i <= 3; ++i) REQUIRE(h.coordinator().Pause("g" + std::to_string(i)).ok());
  BulkRequest resume = Bulk(BulkAction::kResume, "g");
  resume.filter.gid_prefix.reset();
  resume.filter.paused = true;
  const storage::BulkJob resumed = MustStart(h, resume);
  CHECK(MustGet(h, resumed.id).acted == 3);
  // Resumed, each called at once and (scripts spent) succeeded.
  for (int i = 1; i <= 3; ++i) CHECK(h.StatusOf("g" + std::to_string(i)) == GlobalStatus::kSucceed);

  SubmitRetrying(h, "r", 2);
  const std::size_t before = h.caller().calls().size();
  const storage::BulkJob retried = MustStart(h, Bulk(BulkAction::kRetryNow, "r"));
  CHECK(MustGet(h, retried.id).acted == 2);
  CHECK(h.caller().calls().size() == before + 2);
  CHECK(h.StatusOf("r1") == GlobalStatus::kSucceed);
}

}  // namespace
}  // namespace settle::drive
