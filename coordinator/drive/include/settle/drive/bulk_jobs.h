#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/drive/async_store.h"
#include "settle/drive/bulk_request.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/stuck_alerts.h"
#include "settle/storage/store.h"

namespace settle::drive {

// What a bulk action would touch, without touching it (a dry run): how many transactions the
// filter matches now, and the first of them (the latest created).
struct BulkPlan {
  std::int64_t matched = 0;
  // Whether `matched` counts every match: false when the count stopped at kMaxBulkCount.
  bool complete = true;
  std::vector<storage::GlobalRecord> sample;
};

// Bulk actions as stored jobs (docs/operations.md, "Bulk actions"). A job is created with its
// cursor just past the newest transaction, so that it acts only on transactions that existed
// then; it walks them newest first, a page of kBulkPage at a time, and takes its action on each
// through the Coordinator with its step (JobStep): the action, its audit entry (naming the
// job) and the job's new cursor commit together. After a crash, or on another instance, a job
// resumes from its cursor: each transaction is acted on at most once, and of two runs of one
// job only one takes each step (the other's commit is refused, and it stops). A transaction
// the action is refused for (finished or paused meanwhile) is skipped, counted and the reason
// kept (BulkJob::last_skip).
//
// Runs go on `executor` in the background. Lifetime: the store, coordinator and clock outlive
// it, and it outlives every run (stop the executor's threads first: a run then ends where it
// stood, and its job resumes at the next start). Thread-safety: any method from any thread.
class BulkJobs {
 public:
  static constexpr std::size_t kBulkPage = 50;
  static constexpr std::int64_t kMaxBulkCount = 1'000'000;
  static constexpr std::size_t kSampleSize = 20;

  // A run acts on at most `per_second` transactions a second (0: as fast as the store takes
  // them), paced by the clock's monotonic reading. When storage is unavailable a run waits
  // `retry_after`, doubling up to kMaxRetryAfter, and goes on; with 0 (or once the coordinator
  // is shutting down) it ends instead, and the job is resumed at the next start.
  BulkJobs(AsyncStore& store, Coordinator& coordinator, const Clock& clock,
           asio::any_io_executor executor, std::size_t per_second = 0,
           Duration retry_after = Duration(0));
  static constexpr Duration kMaxRetryAfter{30'000};

  // Counts what `request` would act on (CheckBulkRequest first: InvalidArgument naming the
  // field; no reason needed).
  asio::awaitable<Result<BulkPlan>> DryRun(BulkRequest request);
  // Stores a job for `request` (a reason required, the filter's matches counted now), audited
  // (kAuditBulk) in the same commit and sent to the alerts, and starts running it.
  asio::awaitable<Result<storage::BulkJob>> Start(BulkRequest request);
  // Stops a running job (NotFound, or Conflict when it is not running): it takes no further
  // step, on any instance. Audited (kAuditBulkCancel) by `actor` with `reason` (required).
  asio::awaitable<Status> Cancel(std::string id, std::string actor, std::string reason);
  // Runs a job that is running in the store but by no run on this instance (its instance
  // stopped). NotFound; Conflict when it is not running. A second run on another instance
  // that is still going is harmless: one of the two stops at its next step. Audited
  // (kAuditBulkResume).
  asio::awaitable<Result<storage::BulkJob>> Resume(std::string id, std::string actor,
                                                   std::string reason);
  // At start: runs every job the store says is running. Blocks on the store. How many.
  Result<std::size_t> ResumeAll();

  asio::awaitable<Result<std::optional<storage::BulkJob>>> Get(std::string id);
  asio::awaitable<Result<std::vector<storage::BulkJob>>> List(std::size_t limit);

  // Whether a run of `id` is going on this instance (tests, the console).
  bool Running(const std::string& id) const;

  // Where a job's start, cancel and resume are reported (null: nowhere); the actions it takes
  // are not, one by one. Before serving.
  void SetAlerts(StuckAlerts* alerts) { alerts_ = alerts; }

 private:
  // The job's whole walk; ends when it is done, cancelled or taken by another run. Storage
  // that is unavailable is waited out (retry_after), or ends the run with the job still
  // running, to be resumed.
  asio::awaitable<void> Run(std::string id);
  // What one transaction's step came to: taken (acted on or skipped), storage unavailable
  // (nothing taken: try again later), or the run must end (another run took the step, or the
  // job was cancelled).
  enum class Taken { kStep, kLater, kEnd };
  // One transaction: the job's action with its step, or the step alone as a skip.
  asio::awaitable<Taken> Act(const storage::BulkJob& job, const BulkRequest& request,
                             const storage::GlobalRecord& tx, std::int64_t& cursor);
  // Moves the job from `expected` to `cursor` with no action (a scan past no match, the end).
  asio::awaitable<Status> Step(std::string id, std::int64_t expected, std::int64_t cursor,
                               storage::JobState state);
  // Counts the filter's matches among transactions with id < before (0: all).
  asio::awaitable<Result<BulkPlan>> Count(storage::ListQuery filter, std::int64_t before);
  // The id just past the newest transaction: where a new job starts.
  asio::awaitable<Result<std::int64_t>> Newest();
  void Launch(const std::string& id);

  AsyncStore& store_;
  Coordinator& coordinator_;
  const Clock& clock_;
  asio::any_io_executor executor_;
  std::size_t per_second_;
  Duration retry_after_;
  mutable std::mutex mu_;
  std::set<std::string> running_;  // the jobs a run on this instance is walking
  StuckAlerts* alerts_ = nullptr;
};

}  // namespace settle::drive
