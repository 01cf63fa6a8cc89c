#include "settle/drive/bulk_jobs.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <random>

#include "settle/core/log_text.h"

// GCC 12 mishandles temporaries with destructors that live across a co_await: every argument
// of a co_await here is built in a named variable first.
namespace settle::drive {
namespace {

std::string NewJobId() {
  static thread_local std::mt19937_64 bits{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "job-";
  for (std::uint64_t v = bits(), i = 0; i < 16; ++i, v >>= 4) id += kHex[v & 0xf];
  return id;
}

// The request a stored job was created from, for its run.
Result<BulkRequest> RequestOf(const storage::BulkJob& job) {
  BulkRequest request;
  const std::optional<BulkAction> action = ParseBulkAction(job.action);
  if (!action) return Status::Internal("job " + job.id + ": unknown action " + job.action);
  request.action = *action;
  Result<storage::ListQuery> filter = DecodeFilter(job.filter);
  if (!filter) return filter.status();
  request.filter = std::move(filter).value();
  if (Status s = DecodeParameters(job.parameters, request); !s.ok()) return s;
  request.actor = job.actor;
  request.reason = job.reason;
  return request;
}

}  // namespace

BulkJobs::BulkJobs(AsyncStore& store, Coordinator& coordinator, const Clock& clock,
                   asio::any_io_executor executor, std::size_t per_second, Duration retry_after)
    : store_(store),
      coordinator_(coordinator),
      clock_(clock),
      executor_(std::move(executor)),
      per_second_(per_second),
      retry_after_(retry_after) {}

asio::awaitable<Result<std::int64_t>> BulkJobs::Newest() {
  storage::ListQuery newest;
  newest.limit = 1;
  auto page = co_await store_.List(std::move(newest));
  if (!page) co_return page.status();
  if (page->transactions.empty()) co_return std::int64_t{0};
  co_return page->transactions.front().id + 1;
}

asio::awaitable<Result<BulkPlan>> BulkJobs::Count(storage::ListQuery filter, std::int64_t before) {
  BulkPlan plan;
  filter.limit = 1000;
  filter.before_id = before;
  while (before > 0) {
    storage::ListQuery page_query = filter;
    auto page = co_await store_.List(std::move(page_query));
    if (!page) co_return page.status();
    for (storage::GlobalRecord& g : page->transactions) {
      if (plan.sample.size() < kSampleSize) plan.sample.push_back(std::move(g));
    }
    plan.matched += static_cast<std::int64_t>(page->transactions.size());
    if (!page->next_position) break;
    if (plan.matched >= kMaxBulkCount) {
      plan.complete = false;
      break;
    }
    filter.before_id = page->next_position;
  }
  co_return plan;
}

asio::awaitable<Result<BulkPlan>> BulkJobs::DryRun(BulkRequest request) {
  if (Status s = CheckBulkRequest(request); !s.ok()) co_return s;
  auto newest = co_await Newest();
  if (!newest) co_return newest.status();
  co_return co_await Count(std::move(request.filter), *newest);
}

asio::awaitable<Result<storage::BulkJob>> BulkJobs::Start(BulkRequest request) {
  if (request.reason.empty()) {
    co_return Status::InvalidArgument("reason: required (why, for the audit trail)");
  }
  if (Status s = CheckBulkRequest(request); !s.ok()) co_return s;
  auto newest = co_await Newest();
  if (!newest) co_return newest.status();
  auto plan = co_await Count(request.filter, *newest);
  if (!plan) co_return plan.status();
  storage::BulkJob job;
  job.id = NewJobId();
  job.created_at = clock_.Now();
  job.updated_at = job.created_at;
  job.actor = request.actor;
  job.action = std::string(ToString(request.action));
  job.filter = EncodeFilter(request.filter);
  job.parameters = EncodeParameters(request);
  job.reason = request.reason;
  job.cursor = *newest;
  job.matched = plan->matched;
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditBulk, "", job.id, job.actor, job.reason);
  audit.parameters = nlohmann::json{
      {"action", job.action},
      {"filter", nlohmann::json::parse(job.filter, nullptr, false)},
      {"parameters", nlohmann::json::parse(job.parameters, nullptr, false)},
      {"matched",
       job.matched}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  storage::WriteBatch insert;
  insert.Add(storage::InsertJob{job});
  insert.Add(storage::RecordAudit{audit});
  if (Status s = co_await store_.Commit(std::move(insert)); !s.ok()) co_return s;
  if (alerts_ != nullptr) alerts_->AdminAction(audit);
  spdlog::warn("job={} {} started by actor={} on {} transactions; filter={} reason={}", job.id,
               job.action, job.actor.empty() ? "unknown" : job.actor, job.matched,
               LogValue(job.filter), LogValue(job.reason));
  Launch(job.id);
  co_return job;
}

asio::awaitable<Status> BulkJobs::Cancel(std::string id, std::string actor, std::string reason) {
  if (reason.empty()) {
    co_return Status::InvalidArgument("reason: required (why, for the audit trail)");
  }
  const storage::AuditEntry audit = OperatorAudit(clock_.Now(), storage::kAuditBulkCancel, "", id,
                                                  std::move(actor), std::move(reason));
  storage::WriteBatch cancel;
  cancel.Add(storage::CancelJob{id, audit.at});
  cancel.Add(storage::RecordAudit{audit});
  const Status s = co_await store_.Commit(std::move(cancel));
  if (!s.ok()) co_return s;
  spdlog::warn("job={} cancelled by actor={}; reason={}", id,
               audit.actor.empty() ? "unknown" : audit.actor, LogValue(audit.reason));
  if (alerts_ != nullptr) alerts_->AdminAction(audit);
  co_return Status::Ok();
}

asio::awaitable<Result<storage::BulkJob>> BulkJobs::Resume(std::string id, std::string actor,
                                                           std::string reason) {
  if (reason.empty()) {
    co_return Status::InvalidArgument("reason: required (why, for the audit trail)");
  }
  auto job = co_await Get(id);
  if (!job) co_return job.status();
  if (!job->has_value()) co_return Status::NotFound("job " + id + " not found");
  if ((*job)->state != storage::JobState::kRunning) {
    co_return Status::Conflict("job " + id + " is " + std::string(ToString((*job)->state)) +
                               ", not running");
  }
  const storage::AuditEntry audit = OperatorAudit(clock_.Now(), storage::kAuditBulkResume, "", id,
                                                  std::move(actor), std::move(reason));
  storage::WriteBatch record;
  record.Add(storage::RecordAudit{audit});
  if (Status s = co_await store_.Commit(std::move(record)); !s.ok()) co_return s;
  if (alerts_ != nullptr) alerts_->AdminAction(audit);
  Launch(id);
  co_return std::move(**job);
}

Result<std::size_t> BulkJobs::ResumeAll() {
  auto jobs = store_.store().ListJobs(1000, true);
  if (!jobs) return jobs.status();
  for (const storage::BulkJob& job : *jobs) {
    spdlog::info("job={} {} resumed at start", job.id, job.action);
    Launch(job.id);
  }
  return jobs->size();
}

asio::awaitable<Result<std::optional<storage::BulkJob>>> BulkJobs::Get(std::string id) {
  co_return co_await store_.Read([this, &id] { return store_.store().LoadJob(id); });
}

asio::awaitable<Result<std::vector<storage::BulkJob>>> BulkJobs::List(std::size_t limit) {
  co_return co_await store_.Read([this, limit] { return store_.store().ListJobs(limit, false); });
}

bool BulkJobs::Running(const std::string& id) const {
  const std::lock_guard lock(mu_);
  return running_.contains(id);
}

void BulkJobs::Launch(const std::string& id) {
  {
    const std::lock_guard lock(mu_);
    if (!running_.insert(id).second) return;  // already walking here
  }
  asio::co_spawn(executor_, Run(id), asio::detached);
}

asio::awaitable<void> BulkJobs::Run(std::string id) {
  // The pace: the n-th transaction since the run started (or last waited) is acted on no sooner
  // than n / per_second after it.
  MonoTime started = clock_.Monotonic();
  std::int64_t taken = 0;
  asio::steady_timer timer(executor_);
  Duration wait{0};  // before the next try, after storage was unavailable
  // Storage unavailable: waited out with backoff, or the run ends (retry_after_ 0, or
  // settled stopping) and the job is resumed at the next start.
  const auto later = [this, &id, &wait](const Status& why) {
    if (retry_after_.count() == 0 || coordinator_.ShuttingDown()) {
      spdlog::error("job={} stopped, to be resumed: {}", id, why.ToString());
      return false;
    }
    wait = std::min(std::max(retry_after_, wait * 2), kMaxRetryAfter);
    spdlog::error("job={} waits {} ms: {}", id, wait.count(), why.ToString());
    return true;
  };
  for (;;) {
    if (wait.count() > 0) {
      timer.expires_after(wait);
      co_await timer.async_wait(asio::use_awaitable);
      started = clock_.Monotonic();
      taken = 0;
    }
    auto loaded = co_await Get(id);
    if (!loaded) {
      if (loaded.status().code() == StatusCode::kUnavailable && later(loaded.status())) continue;
      break;
    }
    if (!loaded->has_value()) {
      spdlog::error("job={} stopped: no longer stored", id);
      break;
    }
    const storage::BulkJob job = std::move(**loaded);
    if (job.state != storage::JobState::kRunning) break;
    Result<BulkRequest> request = RequestOf(job);
    if (!request) {
      spdlog::error("job={} stopped: {}", id, request.status().ToString());
      break;
    }
    storage::ListQuery page_query = request->filter;
    page_query.before_id = job.cursor;
    page_query.limit = kBulkPage;
    Result<storage::ListPage> page = storage::ListPage{};
    if (job.cursor > 0) page = co_await store_.List(std::move(page_query));
    if (!page) {
      if (page.status().code() == StatusCode::kUnavailable && later(page.status())) continue;
      spdlog::error("job={} stopped: {}", id, page.status().ToString());
      break;
    }
    std::int64_t cursor = job.cursor;
    Taken outcome = Taken::kStep;
    for (const storage::GlobalRecord& tx : page->transactions) {
      if (per_second_ > 0) {
        const MonoTime due =
            started +
            std::chrono::microseconds(taken * 1'000'000 / static_cast<std::int64_t>(per_second_));
        if (const MonoTime now = clock_.Monotonic(); due > now) {
          timer.expires_after(due - now);
          co_await timer.async_wait(asio::use_awaitable);
        }
      }
      ++taken;
      outcome = co_await Act(job, *request, tx, cursor);
      if (outcome != Taken::kStep) break;
    }
    if (outcome == Taken::kEnd) break;
    if (outcome == Taken::kLater) {
      if (later(Status::Unavailable("storage"))) continue;
      break;
    }
    // Past the rows a search read without a match (or to the end: the job is done).
    const std::int64_t next = page->next_position.value_or(0);
    if (next == 0 || next != cursor) {
      const storage::JobState state =
          next == 0 ? storage::JobState::kDone : storage::JobState::kRunning;
      const Status s = co_await Step(id, cursor, next, state);
      if (s.code() == StatusCode::kUnavailable && later(s)) continue;
      if (!s.ok()) break;  // another run took it, or it was cancelled
      if (state == storage::JobState::kDone) {
        spdlog::warn("job={} done", id);
        break;
      }
    }
    wait = Duration(0);
  }
  const std::lock_guard lock(mu_);
  running_.erase(id);
}

asio::awaitable<BulkJobs::Taken> BulkJobs::Act(const storage::BulkJob& job,
                                               const BulkRequest& request,
                                               const storage::GlobalRecord& tx,
                                               std::int64_t& cursor) {
  JobStep step{job.id, storage::AdvanceJob{}};
  step.advance.id = job.id;
  step.advance.expected_cursor = cursor;
  step.advance.cursor = tx.id;
  step.advance.acted = 1;
  step.advance.at = clock_.Now();
  std::optional<JobStep> with_step = step;
  Status s;
  switch (request.action) {
    case BulkAction::kRetryNow: {
      engine::RetryNowRequest r{tx.gid, request.reason, request.actor, {}};
      s = co_await coordinator_.ResetNextCronTime(std::move(r), std::move(with_step));
      break;
    }
    case BulkAction::kPause: {
      engine::PauseRequest r{tx.gid, request.reason, request.actor, {}};
      s = co_await coordinator_.Pause(std::move(r), std::move(with_step));
      break;
    }
    case BulkAction::kResume: {
      engine::PauseRequest r{tx.gid, request.reason, request.actor, {}};
      s = co_await coordinator_.Resume(std::move(r), std::move(with_step));
      break;
    }
    case BulkAction::kForceStop: {
      engine::ForceStopRequest r{tx.gid, request.reason, request.actor, {}};
      s = co_await coordinator_.ForceStop(std::move(r), std::move(with_step));
      break;
    }
    case BulkAction::kRedirect: {
      HostRedirect r{tx.gid, request.from, request.to, request.actor, request.reason};
      s = co_await coordinator_.RedirectHost(std::move(r), std::move(with_step));
      break;
    }
  }
  if (s.ok()) {
    cursor = tx.id;
    co_return Taken::kStep;
  }
  if (s.code() == StatusCode::kUnavailable) {
    spdlog::error("job={} could not act on gid={}: {}", job.id, tx.gid, s.ToString());
    co_return Taken::kLater;
  }
  // Refused for this transaction (it changed since it matched): skipped, with why.
  storage::AdvanceJob skip = step.advance;
  skip.acted = 0;
  skip.skipped = 1;
  skip.last_skip = tx.gid + ": " + s.message();
  storage::WriteBatch batch;
  batch.Add(std::move(skip));
  const Status skipped = co_await store_.Commit(std::move(batch));
  if (skipped.code() == StatusCode::kUnavailable) co_return Taken::kLater;
  if (!skipped.ok()) {
    // Another run took this step, or the job was cancelled: this run ends.
    spdlog::info("job={} run ends at gid={}: {}", job.id, tx.gid, skipped.ToString());
    co_return Taken::kEnd;
  }
  cursor = tx.id;
  co_return Taken::kStep;
}

asio::awaitable<Status> BulkJobs::Step(std::string id, std::int64_t expected, std::int64_t cursor,
                                       storage::JobState state) {
  storage::AdvanceJob step;
  step.id = std::move(id);
  step.expected_cursor = expected;
  step.cursor = cursor;
  step.state = state;
  step.at = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(std::move(step));
  co_return co_await store_.Commit(std::move(batch));
}

}  // namespace settle::drive
