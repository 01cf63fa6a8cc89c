#include "settle/engine/two_phase_engine.h"

#include <algorithm>

#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"
#include "settle/engine/new_records.h"
#include "settle/engine/request_rules.h"

namespace settle::engine {
namespace {

// Phase 2: every row of `op` is called in parallel until all have succeeded.
Decision DrivePhaseTwo(const storage::Transaction& tx, BranchOp op, GlobalStatus done,
                       TimePoint now) {
  Decision d;
  bool all_succeeded = true;
  for (std::size_t i = 0; i < tx.branches.size(); ++i) {
    const storage::BranchRecord& b = tx.branches[i];
    if (b.op != op || b.status == BranchStatus::kSucceed) continue;
    all_succeeded = false;
    if (b.next_retry_at <= now) {
      d.calls.push_back(i);
    } else {
      d.wake_at = d.wake_at ? std::min(*d.wake_at, b.next_retry_at) : b.next_retry_at;
    }
  }
  if (all_succeeded) {
    d.next_status = done;
    d.wake_at.reset();
  }
  return d;
}

// A failed transaction that still has a rollback row not succeeded, and that no operator
// force-stopped, was left so by a version with the timeout/registration race: its branch's Try
// is reserved. Its rollbacks are made as in aborting, and it stays failed.
Decision RepairUndoneRollbacks(const storage::Transaction& tx, BranchOp rollback, TimePoint now) {
  if (tx.global.force_stopped) return {};
  Decision d = DrivePhaseTwo(tx, rollback, GlobalStatus::kFailed, now);
  d.next_status.reset();
  return d;
}

Decision DecideTwoPhase(const storage::Transaction& tx, TimePoint now, BranchOp commit,
                        BranchOp rollback) {
  const storage::GlobalRecord& g = tx.global;
  switch (g.status) {
    case GlobalStatus::kPrepared: {
      Decision d;
      if (g.options.timeout_to_fail.count() <= 0) return d;
      const TimePoint deadline = g.create_time + g.options.timeout_to_fail;
      if (now >= deadline) {
        d.next_status = GlobalStatus::kAborting;
        d.reason = "timeout_to_fail: not submitted within " +
                   std::to_string(g.options.timeout_to_fail.count()) + " ms";
      } else {
        d.wake_at = deadline;
      }
      return d;
    }
    case GlobalStatus::kSubmitted:
      return DrivePhaseTwo(tx, commit, GlobalStatus::kSucceed, now);
    case GlobalStatus::kAborting:
      return DrivePhaseTwo(tx, rollback, GlobalStatus::kFailed, now);
    case GlobalStatus::kFailed:
      return RepairUndoneRollbacks(tx, rollback, now);
    case GlobalStatus::kSucceed:
      return {};
  }
  return {};
}

}  // namespace

Status CheckRegisterBranch(const RegisterBranchRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  const auto types = {TransType::kTcc, TransType::kXa};
  if (Status s = CheckTypeOf(request.trans_type, "registerBranch", types); !s.ok()) return s;
  if (request.branch_id.empty()) return FieldError("branch_id", "required");
  if (!IsValidBranchId(request.branch_id)) {
    return FieldError("branch_id", "must be 1 to " + std::to_string(kMaxBranchIdLength) +
                                       " characters of [A-Za-z0-9_.:-]");
  }
  if (request.trans_type == TransType::kXa) return CheckUrl("url", request.url, true);
  if (Status s = CheckUrl("confirm", request.confirm_url, true); !s.ok()) return s;
  if (Status s = CheckUrl("cancel", request.cancel_url, true); !s.ok()) return s;
  return CheckUrl("try", request.try_url, false);
}

namespace {

// The origin a checked branch URL calls: "http://host:port", "grpcs://host:port", lowercased.
std::string OriginOf(const std::string& url) {
  if (LooksLikeGrpcTarget(url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(url);
    return target ? AsciiLowercase(target->Origin()) : std::string();
  }
  Result<Url> parsed = ParseUrl(url);
  return parsed ? AsciiLowercase(parsed->Origin()) : std::string();
}

}  // namespace

Status CheckSameParticipant(const RegisterBranchRequest& request) {
  if (request.try_url.empty() || request.trans_type != TransType::kTcc) return Status::Ok();
  const std::string origin = OriginOf(request.try_url);
  for (const std::string* phase2 : {&request.confirm_url, &request.cancel_url}) {
    if (OriginOf(*phase2) != origin) {
      return FieldError("try", "must be on the participant of confirm and cancel (" +
                                   OriginOf(*phase2) + "), not " + origin +
                                   ", for settled to countersign it (protocol.md §4.9)");
    }
  }
  return Status::Ok();
}

std::vector<storage::BranchRecord> RegisteredRows(const RegisterBranchRequest& request,
                                                  TimePoint now) {
  const bool xa = request.trans_type == TransType::kXa;
  const SharedBytes body(request.data);  // both rows carry it, stored once
  std::vector<storage::BranchRecord> rows;
  rows.push_back(NewBranchRow(request.gid, request.branch_id,
                              xa ? BranchOp::kRollback : BranchOp::kCancel, 0,
                              xa ? request.url : request.cancel_url, body, now));
  rows.push_back(NewBranchRow(request.gid, request.branch_id,
                              xa ? BranchOp::kCommit : BranchOp::kConfirm, 0,
                              xa ? request.url : request.confirm_url, body, now));
  return rows;
}

Status TooManyBranches(const RegisterBranchRequest& request, std::size_t max_branches) {
  const bool xa = request.trans_type == TransType::kXa;
  return FieldError("branch_id", std::string(xa ? "an XA" : "a TCC") +
                                     " transaction may have at most " +
                                     std::to_string(max_branches) + " branches; gid " +
                                     request.gid + " has them all");
}

Decision DecideTcc(const storage::Transaction& tx, TimePoint now) {
  return DecideTwoPhase(tx, now, BranchOp::kConfirm, BranchOp::kCancel);
}

Decision DecideXa(const storage::Transaction& tx, TimePoint now) {
  return DecideTwoPhase(tx, now, BranchOp::kCommit, BranchOp::kRollback);
}

}  // namespace settle::engine
