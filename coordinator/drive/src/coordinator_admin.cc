// Operators' actions on one transaction (docs/operations.md, "Pause and resume", "Resolving a
// branch by hand", ...): each checks its request, builds its change, and commits it with its
// audit entry (CommitAudited), and with a bulk job's step when a job takes it.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "refusals.h"
#include "settle/core/log_text.h"
#include "settle/drive/bulk_request.h"
#include "settle/drive/coordinator.h"
#include "settle/engine/manual_resolution.h"
#include "settle/engine/msg_engine.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/transaction_types.h"

// GCC 12 mishandles temporaries with destructors that live across a co_await: every argument
// of a co_await here is built in a named variable first.
namespace settle::drive {

void AddJobStep(storage::WriteBatch& batch, storage::AuditEntry& audit,
                const std::optional<JobStep>& step) {
  if (!step) return;
  nlohmann::json parameters = nlohmann::json::parse(audit.parameters, nullptr, false);
  if (!parameters.is_object()) parameters = nlohmann::json::object();
  parameters["job"] = step->job_id;
  audit.parameters = parameters.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  batch.Add(step->advance);
}

storage::AuditEntry OperatorAudit(TimePoint at, std::string_view action, std::string gid,
                                  std::string target, std::string actor, std::string reason) {
  storage::AuditEntry entry;
  entry.at = at;
  entry.actor = std::move(actor);
  entry.action = std::string(action);
  entry.gid = std::move(gid);
  entry.target = std::move(target);
  entry.parameters = "{}";
  entry.reason = std::move(reason);
  return entry;
}

asio::awaitable<Status> Coordinator::ForceStop(engine::ForceStopRequest request,
                                               std::optional<JobStep> step) {
  if (Status s = Admit("forceStop", request.unread_fields, engine::CheckForceStop(request));
      !s.ok()) {
    co_return s;
  }
  const std::string& gid = request.gid;
  std::vector<GlobalStatus> from = {GlobalStatus::kPrepared, GlobalStatus::kSubmitted,
                                    GlobalStatus::kAborting};
  // Stored, so that whoever opens the transaction later learns who stopped it and why.
  std::string reason = "stopped by an operator (forceStop";
  if (!request.actor.empty()) reason += " by " + request.actor;
  reason += ")";
  if (!request.reason.empty()) reason += ": " + request.reason;
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditForceStop, gid, "", request.actor, request.reason);
  StatusChange change{.gid = gid,
                      .from = std::move(from),
                      .to = GlobalStatus::kFailed,
                      .reason = std::move(reason),
                      .force_stop = true,
                      .who = {},  // admin only: every transaction
                      .audit = audit,
                      .step = step};
  const auto changed = co_await ChangeStatus(std::move(change));
  if (!changed) co_return changed.status();
  spdlog::warn("gid={} force-stopped by actor={}; retries stop; reason={}", gid,
               request.actor.empty() ? "unknown" : request.actor, LogValue(request.reason));
  // The entry as stored: ChangeStatus stamps it with the change's time. A job alerts once,
  // when it starts.
  if (alerts_ != nullptr && changed->has_value() && !step) {
    audit.at = (*changed)->global.update_time;
    alerts_->AdminAction(audit);
  }
  if (settings_.gates != nullptr) settings_.gates->Forget(gid);  // it waits for no host now
  scheduler_.Schedule(gid, clock_.Now());                        // lets the scheduler forget it
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::ResetNextCronTime(engine::RetryNowRequest request,
                                                       std::optional<JobStep> step) {
  const std::string& gid = request.gid;
  if (Status s = Admit("resetNextCronTime", request.unread_fields, engine::CheckGid(gid));
      !s.ok()) {
    co_return s;
  }
  if (Status s = engine::CheckReason("reason", request.reason); !s.ok()) co_return s;
  const TimePoint now = clock_.Now();
  storage::WriteBatch retry;
  retry.Add(storage::RetryNow{gid, now});
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditRetryNow, gid, "", request.actor, request.reason);
  if (Status s = co_await CommitAudited(std::move(retry), audit, now, step); !s.ok()) co_return s;
  spdlog::info("gid={} retry requested now", gid);
  // A job alerts once, when it starts.
  if (alerts_ != nullptr && !step) alerts_->AdminAction(audit);
  // Before its pass is scheduled: that pass calls even through an open circuit.
  if (settings_.gates != nullptr) settings_.gates->RetryNow(gid);
  scheduler_.Schedule(gid, now);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::Pause(engine::PauseRequest request,
                                           std::optional<JobStep> step) {
  if (Status s = Admit("pause", request.unread_fields, engine::CheckPause(request)); !s.ok()) {
    co_return s;
  }
  const std::string& gid = request.gid;
  const TimePoint now = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::PauseGlobal{gid, storage::Pause{now, request.actor, request.reason}});
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditPause, gid, "", request.actor, request.reason);
  if (Status s = co_await CommitAudited(std::move(batch), audit, now, step); !s.ok()) co_return s;
  if (settings_.pauses != nullptr) settings_.pauses->Signal(gid);
  // It waits for no host while paused: the hosts panel does not count it.
  if (settings_.gates != nullptr) settings_.gates->Forget(gid);
  spdlog::warn("gid={} paused by actor={}; no call until it is resumed; reason={}", gid,
               request.actor.empty() ? "unknown" : request.actor, LogValue(request.reason));
  // A job alerts once, when it starts.
  if (alerts_ != nullptr && !step) alerts_->AdminAction(audit);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::Resume(engine::PauseRequest request,
                                            std::optional<JobStep> step) {
  if (Status s = Admit("resume", request.unread_fields, engine::CheckPause(request)); !s.ok()) {
    co_return s;
  }
  const std::string& gid = request.gid;
  const TimePoint now = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::ResumeGlobal{gid, now});
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditResume, gid, "", request.actor, request.reason);
  if (Status s = co_await CommitAudited(std::move(batch), audit, now, step); !s.ok()) co_return s;
  if (settings_.pauses != nullptr) settings_.pauses->Clear(gid);
  spdlog::warn("gid={} resumed by actor={}; reason={}", gid,
               request.actor.empty() ? "unknown" : request.actor, LogValue(request.reason));
  // A job alerts once, when it starts.
  if (alerts_ != nullptr && !step) alerts_->AdminAction(audit);
  scheduler_.Schedule(gid, now);
  co_return Status::Ok();
}

asio::awaitable<Result<Coordinator::TargetRow>> Coordinator::LoadTargetRow(std::string gid,
                                                                           std::string branch_id,
                                                                           std::string op,
                                                                           std::string reason) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  if (Status s = engine::CheckGid(gid); !s.ok()) co_return s;
  if (branch_id.empty()) co_return Status::InvalidArgument("branch_id: required");
  const std::optional<BranchOp> parsed_op = ParseBranchOp(op);
  if (!parsed_op) {
    co_return Status::InvalidArgument(
        "op: expected confirm, cancel, action, compensate, commit or rollback");
  }
  if (reason.empty()) {
    co_return Status::InvalidArgument("reason: required (why, for the audit trail)");
  }
  if (Status s = engine::CheckReason("reason", reason); !s.ok()) co_return s;
  auto loaded = co_await store_.Load(gid);
  if (!loaded) co_return loaded.status();
  if (!loaded->has_value()) co_return NoSuchGid(gid);
  TargetRow target{std::move(**loaded), 0};
  const auto& rows = target.tx.branches;
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const storage::BranchRecord& b) {
    return b.branch_id == branch_id && b.op == *parsed_op;
  });
  if (it == rows.end()) {
    co_return Status::NotFound("branch " + branch_id + " (" + op + ") of gid " + gid +
                               " not found");
  }
  target.row = static_cast<std::size_t>(it - rows.begin());
  co_return target;
}

asio::awaitable<Status> Coordinator::Resolve(engine::ResolveRequest request) {
  const std::optional<engine::ResolvedAs> as = engine::ParseResolvedAs(request.outcome);
  if (!as) co_return Status::InvalidArgument("outcome: expected succeed or failed");
  auto target = co_await LoadTargetRow(request.gid, request.branch_id, request.op, request.reason);
  if (!target) co_return target.status();
  const storage::Transaction& tx = target->tx;
  const TimePoint now = clock_.Now();
  if (Status s = engine::CheckResolution(tx, target->row, *as, now); !s.ok()) co_return s;
  storage::BranchRecord row = tx.branches[target->row];
  engine::ApplyResolution(row, *as, now);
  storage::WriteBatch batch;
  // Serialized with a status change as a pass's write is; the row's own compare-and-set with
  // a pass that recorded an answer meanwhile.
  batch.Add(storage::ExpectGlobalStatus{tx.global.gid, {tx.global.status}});
  batch.Add(storage::UpdateBranch{row, BranchStatus::kPrepared});
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditResolve, tx.global.gid,
                    "branch " + row.branch_id + " " + std::string(ToString(row.op)), request.actor,
                    request.reason);
  audit.parameters = nlohmann::json{{"branch_id", row.branch_id},
                                    {"op", ToString(row.op)},
                                    {"outcome", engine::ToString(*as)}}
                         .dump();
  const std::optional<JobStep> no_step;
  if (Status s = co_await CommitAudited(std::move(batch), audit, now, no_step); !s.ok()) {
    co_return s;
  }
  spdlog::warn("gid={} branch={} op={} resolved as {} by actor={}; reason={}", tx.global.gid,
               row.branch_id, ToString(row.op), engine::ToString(*as),
               request.actor.empty() ? "unknown" : request.actor, LogValue(request.reason));
  if (alerts_ != nullptr) alerts_->AdminAction(audit);
  scheduler_.Schedule(tx.global.gid, now);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::Redirect(engine::RedirectRequest request) {
  if (Status s = engine::CheckUrl("url", request.url, true); !s.ok()) co_return s;
  auto target = co_await LoadTargetRow(request.gid, request.branch_id, request.op, request.reason);
  if (!target) co_return target.status();
  const storage::Transaction& tx = target->tx;
  const storage::BranchRecord& row = tx.branches[target->row];
  if (IsTerminal(tx.global.status)) {
    co_return Status::Conflict("gid " + tx.global.gid + " is " +
                               std::string(ToString(tx.global.status)) + ", already finished");
  }
  const TimePoint now = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::ExpectGlobalStatus{tx.global.gid, {tx.global.status}});
  batch.Add(storage::RedirectBranch{tx.global.gid, row.branch_id, row.op, request.url, now});
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditRedirect, tx.global.gid,
                    "branch " + row.branch_id + " " + std::string(ToString(row.op)), request.actor,
                    request.reason);
  audit.parameters = nlohmann::json{
      {"branch_id", row.branch_id},
      {"op", ToString(row.op)},
      {"from", row.url},
      {"to",
       request.url}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::optional<JobStep> no_step;
  if (Status s = co_await CommitAudited(std::move(batch), audit, now, no_step); !s.ok()) {
    co_return s;
  }
  spdlog::warn("gid={} branch={} op={} redirected to {} by actor={}; reason={}", tx.global.gid,
               row.branch_id, ToString(row.op), LogValue(request.url),
               request.actor.empty() ? "unknown" : request.actor, LogValue(request.reason));
  if (alerts_ != nullptr) alerts_->AdminAction(audit);
  // Its next call goes to the new host at once, whatever the old host's circuit says.
  if (settings_.gates != nullptr) settings_.gates->RetryNow(tx.global.gid);
  scheduler_.Schedule(tx.global.gid, now);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::RedirectHost(HostRedirect request,
                                                  std::optional<JobStep> step) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  const std::string& gid = request.gid;
  auto loaded = co_await store_.Load(gid);
  if (!loaded) co_return loaded.status();
  if (!loaded->has_value()) co_return NoSuchGid(gid);
  const storage::Transaction& tx = **loaded;
  if (IsTerminal(tx.global.status)) {
    co_return Status::Conflict("gid " + gid + " is " + std::string(ToString(tx.global.status)) +
                               ", already finished");
  }
  const TimePoint now = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::ExpectGlobalStatus{gid, {tx.global.status}});
  nlohmann::json rows = nlohmann::json::array();
  for (const storage::BranchRecord& row : tx.branches) {
    if (row.status != BranchStatus::kPrepared) continue;
    const std::optional<std::string> url = RebaseUrl(row.url, request.from, request.to);
    if (!url) continue;
    if (Status s = engine::CheckUrl("url", *url, true); !s.ok()) co_return s;
    batch.Add(storage::RedirectBranch{gid, row.branch_id, row.op, *url, now});
    rows.push_back(
        {{"branch_id", row.branch_id}, {"op", ToString(row.op)}, {"from", row.url}, {"to", *url}});
  }
  if (rows.empty()) {
    co_return Status::Conflict("gid " + gid + " has no pending call on " + request.from);
  }
  storage::AuditEntry audit = OperatorAudit(clock_.Now(), storage::kAuditRedirect, gid,
                                            request.from, request.actor, request.reason);
  audit.parameters =
      nlohmann::json{{"from", request.from}, {"to", request.to}, {"rows", rows}}.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (Status s = co_await CommitAudited(std::move(batch), audit, now, step); !s.ok()) co_return s;
  spdlog::warn("gid={} calls on {} redirected to {} by actor={}; reason={}", gid, request.from,
               request.to, request.actor.empty() ? "unknown" : request.actor,
               LogValue(request.reason));
  // A job alerts once, when it starts.
  if (alerts_ != nullptr && !step) alerts_->AdminAction(audit);
  if (settings_.gates != nullptr) settings_.gates->RetryNow(gid);
  scheduler_.Schedule(gid, now);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::Resend(engine::PauseRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  if (Status s = engine::CheckPause(request); !s.ok()) co_return s;
  const std::string& gid = request.gid;
  auto loaded = co_await store_.Load(gid);
  if (!loaded) co_return loaded.status();
  if (!loaded->has_value()) co_return NoSuchGid(gid);
  storage::Transaction tx = std::move(**loaded);
  if (Status s = engine::CheckResend(tx); !s.ok()) co_return s;
  const TimePoint now = clock_.Now();
  const std::vector<std::size_t> rows = engine::ApplyResend(tx, now);
  storage::WriteBatch batch;
  batch.Add(storage::UpdateGlobal{tx.global, GlobalStatus::kFailed});
  for (std::size_t i : rows) {
    batch.Add(storage::UpdateBranch{tx.branches[i], BranchStatus::kPrepared});
  }
  storage::AuditEntry audit =
      OperatorAudit(clock_.Now(), storage::kAuditResend, gid, "", request.actor, request.reason);
  const std::optional<JobStep> no_step;
  if (Status s = co_await CommitAudited(std::move(batch), audit, now, no_step); !s.ok()) {
    co_return s;
  }
  spdlog::warn("gid={} sent again by actor={}: {} undelivered; reason={}", gid,
               request.actor.empty() ? "unknown" : request.actor, rows.size(),
               LogValue(request.reason));
  if (alerts_ != nullptr) alerts_->AdminAction(audit);
  scheduler_.Schedule(gid, now);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::CommitAudited(storage::WriteBatch batch,
                                                   storage::AuditEntry& audit, TimePoint now,
                                                   const std::optional<JobStep>& step) {
  audit.at = now;
  AddJobStep(batch, audit, step);
  batch.Add(storage::RecordAudit{audit});
  const Status s = co_await store_.Commit(std::move(batch));
  // A global's NotFound names the gid; a row's (resolve, redirect) names the row already.
  if (s.code() == StatusCode::kNotFound && s.message() == "gid " + audit.gid + " not found") {
    co_return NoSuchGid(audit.gid);
  }
  co_return s;
}

asio::awaitable<Status> Coordinator::RecordAudit(storage::AuditEntry entry) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  if (Status s = engine::CheckReason("reason", entry.reason); !s.ok()) co_return s;
  entry.at = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::RecordAudit{entry});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok() && alerts_ != nullptr) alerts_->AdminAction(entry);
  co_return s;
}

asio::awaitable<Result<storage::AuditPage>> Coordinator::ListAudit(storage::AuditQuery query) {
  co_return co_await store_.Read([this, &query] { return store_.store().ListAudit(query); });
}

}  // namespace settle::drive
