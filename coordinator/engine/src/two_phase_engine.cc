#include "settle/engine/two_phase_engine.h"

#include <algorithm>
#include <optional>

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

// The origin a checked branch URL calls: "http://host:port", "grpcs://host:port", lowercased.
std::string OriginOf(const std::string& url) {
  if (LooksLikeGrpcTarget(url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(url);
    return target ? AsciiLowercase(target->Origin()) : std::string();
  }
  Result<Url> parsed = ParseUrl(url);
  return parsed ? AsciiLowercase(parsed->Origin()) : std::string();
}

Status CheckTccBranch(const RegisterBranchRequest& request) {
  if (Status s = CheckUrl("confirm", request.confirm_url, true); !s.ok()) return s;
  if (Status s = CheckUrl("cancel", request.cancel_url, true); !s.ok()) return s;
  return CheckUrl("try", request.try_url, false);
}

Status CheckXaBranch(const RegisterBranchRequest& request) {
  return CheckUrl("url", request.url, true);
}

// The two rows of a registration: the rollback op's, then the commit op's, seq 0, both with
// the branch's data.
std::vector<storage::BranchRecord> PhaseTwoRows(const RegisterBranchRequest& request,
                                                BranchOp rollback, const std::string& rollback_url,
                                                BranchOp commit, const std::string& commit_url,
                                                TimePoint now) {
  const SharedBytes body(request.data);  // both rows carry it, stored once
  std::vector<storage::BranchRecord> rows;
  rows.push_back(
      NewBranchRow(request.gid, request.branch_id, rollback, 0, rollback_url, body, now));
  rows.push_back(NewBranchRow(request.gid, request.branch_id, commit, 0, commit_url, body, now));
  return rows;
}

std::vector<storage::BranchRecord> TccRows(const RegisterBranchRequest& request, TimePoint now) {
  return PhaseTwoRows(request, BranchOp::kCancel, request.cancel_url, BranchOp::kConfirm,
                      request.confirm_url, now);
}

std::vector<storage::BranchRecord> XaRows(const RegisterBranchRequest& request, TimePoint now) {
  return PhaseTwoRows(request, BranchOp::kRollback, request.url, BranchOp::kCommit, request.url,
                      now);
}

// For each row: whether it is a prepared row of the op the status drives (the commit op while
// submitted, the rollback op while aborting or failed and not force-stopped).
std::vector<bool> PhaseTwoRowsStillCalled(const storage::Transaction& tx, BranchOp commit,
                                          BranchOp rollback) {
  const storage::GlobalRecord& g = tx.global;
  std::optional<BranchOp> op;
  if (g.status == GlobalStatus::kSubmitted) op = commit;
  if (g.status == GlobalStatus::kAborting ||
      (g.status == GlobalStatus::kFailed && !g.force_stopped)) {
    op = rollback;
  }
  return PreparedRowsOf(tx, op);
}

// Every call of phase 2 must succeed in the end.
FailureMeaning PhaseTwoFailure(BranchOp) { return FailureMeaning::kParticipantBug; }

constexpr SubmitPlan kPhaseTwoSubmit{.moves_prepared = true, .creates = false};

}  // namespace

Status CheckSameParticipant(const RegisterBranchRequest& request) {
  if (request.try_url.empty() || !RulesOf(request.trans_type).countersigns_try) {
    return Status::Ok();
  }
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

Decision DecideTcc(const storage::Transaction& tx, TimePoint now) {
  return DecideTwoPhase(tx, now, BranchOp::kConfirm, BranchOp::kCancel);
}

Decision DecideXa(const storage::Transaction& tx, TimePoint now) {
  return DecideTwoPhase(tx, now, BranchOp::kCommit, BranchOp::kRollback);
}

const TypeRules& TccRules() {
  static const TypeRules rules{
      .type = TransType::kTcc,
      .takes_prepare = true,
      .takes_abort = true,
      .takes_register_branch = true,
      .branch_urls = BranchUrls::kConfirmCancel,
      .check_register_branch = CheckTccBranch,
      .registered_rows = TccRows,
      .submit = kPhaseTwoSubmit,
      .abort = {.to = GlobalStatus::kAborting, .drives = true},
      .decide = DecideTcc,
      .rows_still_called =
          [](const storage::Transaction& tx) {
            return PhaseTwoRowsStillCalled(tx, BranchOp::kConfirm, BranchOp::kCancel);
          },
      .failure_of = PhaseTwoFailure,
      .countersigns_try = true,
      .article_name = "a TCC",
  };
  return rules;
}

const TypeRules& XaRules() {
  static const TypeRules rules{
      .type = TransType::kXa,
      .takes_prepare = true,
      .takes_abort = true,
      .takes_register_branch = true,
      .branch_urls = BranchUrls::kOneUrl,
      .check_register_branch = CheckXaBranch,
      .registered_rows = XaRows,
      .submit = kPhaseTwoSubmit,
      .abort = {.to = GlobalStatus::kAborting, .drives = true},
      .decide = DecideXa,
      .rows_still_called =
          [](const storage::Transaction& tx) {
            return PhaseTwoRowsStillCalled(tx, BranchOp::kCommit, BranchOp::kRollback);
          },
      .failure_of = PhaseTwoFailure,
      // XA's phase 2 is always a POST, as DTM calls it (its participants serve POST only), and
      // a gRPC one names the branch's URL in phase2_url.
      .posts_always = true,
      .sends_phase2_url = true,
      .article_name = "an XA",
  };
  return rules;
}

}  // namespace settle::engine
