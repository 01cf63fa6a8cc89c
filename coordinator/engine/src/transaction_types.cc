#include "settle/engine/transaction_types.h"

#include "settle/engine/new_records.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/request_rules.h"

namespace settle::engine {
namespace {

// Every participant address a request names: its steps' and its back-check's.
std::vector<std::string> UrlsOf(const std::vector<RequestStep>& steps,
                                const std::string& query_prepared) {
  std::vector<std::string> urls{query_prepared};
  for (const RequestStep& step : steps) {
    urls.push_back(step.action_url);
    urls.push_back(step.compensate_url);
  }
  return urls;
}

}  // namespace

Status CheckPrepare(const PrepareRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  const TypeRules& rules = RulesOf(request.trans_type);
  if (!rules.takes_prepare) {
    return RefuseType("prepare", [](const TypeRules& r) { return r.takes_prepare; });
  }
  if (Status s = CheckOptions(request.options); !s.ok()) return s;
  if (rules.check_prepare != nullptr) {
    if (Status s = rules.check_prepare(request); !s.ok()) return s;
  }
  if (!rules.carries_steps) return Status::Ok();
  return CheckGrpcHeaders(request.options.branch_headers,
                          UrlsOf(request.steps, request.query_prepared));
}

Status CheckPrepareWorkflow(const PrepareRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  const TypeRules& rules = RulesOf(request.trans_type);
  if (!rules.takes_prepare_workflow) {
    return RefuseType("prepareWorkflow",
                      [](const TypeRules& r) { return r.takes_prepare_workflow; });
  }
  if (Status s = CheckOptions(request.options); !s.ok()) return s;
  if (rules.check_prepare != nullptr) {
    if (Status s = rules.check_prepare(request); !s.ok()) return s;
  }
  return CheckGrpcHeaders(request.options.branch_headers, {request.query_prepared});
}

Status CheckSubmit(const SubmitRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  if (Status s = CheckOptions(request.options); !s.ok()) return s;
  const TypeRules& rules = RulesOf(request.trans_type);
  if (rules.check_submit != nullptr) {
    if (Status s = rules.check_submit(request); !s.ok()) return s;
  }
  return CheckGrpcHeaders(request.options.branch_headers,
                          UrlsOf(request.steps, request.query_prepared));
}

Status CheckAbort(const AbortRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  if (!RulesOf(request.trans_type).takes_abort) {
    return RefuseType("abort", [](const TypeRules& r) { return r.takes_abort; });
  }
  return CheckReason("rollback_reason", request.rollback_reason);
}

Status CheckForceStop(const ForceStopRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  return CheckReason("reason", request.reason);
}

Status CheckPause(const PauseRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  if (request.reason.empty()) {
    return Status::InvalidArgument("reason: required (why, for the audit trail)");
  }
  return CheckReason("reason", request.reason);
}

Status CheckRegisterBranch(const RegisterBranchRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  const TypeRules& rules = RulesOf(request.trans_type);
  if (!rules.takes_register_branch) {
    return RefuseType("registerBranch", [](const TypeRules& r) { return r.takes_register_branch; });
  }
  if (request.branch_id.empty()) return FieldError("branch_id", "required");
  if (!IsValidBranchId(request.branch_id)) {
    return FieldError("branch_id", "must be 1 to " + std::to_string(kMaxBranchIdLength) +
                                       " characters of [A-Za-z0-9_.:-]");
  }
  if (rules.check_register_branch == nullptr) return Status::Ok();
  return rules.check_register_branch(request);
}

Result<storage::Transaction> BuildPrepared(const PrepareRequest& request,
                                           const TopicSubscribers& subscribers,
                                           const TransactionDefaults& defaults, TimePoint now) {
  storage::Transaction tx;
  tx.global = NewGlobal(request.gid, request.trans_type, GlobalStatus::kPrepared, request.options,
                        defaults, now);
  tx.global.next_cron_time = now + tx.global.options.timeout_to_fail;
  tx.global.options.request_fingerprint = FingerprintOf(request);
  const TypeRules& rules = RulesOf(request.trans_type);
  if (rules.prepared_rows == nullptr) return tx;
  auto rows = rules.prepared_rows(request, tx.global.options, subscribers, now);
  if (!rows) return rows.status();
  tx.branches = std::move(*rows);
  // A type whose prepared transactions wait for a row (a workflow's resume): due when it is.
  if (!rules.prepared_waits_for_deadline && !tx.branches.empty()) {
    tx.global.next_cron_time = tx.branches.front().next_retry_at;
    for (const storage::BranchRecord& row : tx.branches) {
      tx.global.next_cron_time = std::min(*tx.global.next_cron_time, row.next_retry_at);
    }
  }
  return tx;
}

Result<storage::Transaction> BuildSubmitted(const SubmitRequest& request,
                                            const TopicSubscribers& subscribers,
                                            const TransactionDefaults& defaults, TimePoint now,
                                            std::string fingerprint) {
  const TypeRules& rules = RulesOf(request.trans_type);
  if (rules.submitted_rows == nullptr) {
    return Status::Conflict(std::string(rules.article_name) +
                            " transaction is created by its prepare, not its submit");
  }
  storage::Transaction tx;
  tx.global = NewGlobal(request.gid, request.trans_type, GlobalStatus::kSubmitted, request.options,
                        defaults, now);
  tx.global.options.request_fingerprint = std::move(fingerprint);
  auto rows = rules.submitted_rows(request, subscribers, now);
  if (!rows) return rows.status();
  tx.branches = std::move(*rows);
  return tx;
}

std::vector<storage::BranchRecord> RegisteredRows(const RegisterBranchRequest& request,
                                                  TimePoint now) {
  const TypeRules& rules = RulesOf(request.trans_type);
  if (rules.registered_rows == nullptr) return {};
  return rules.registered_rows(request, now);
}

Status TooManyBranches(const RegisterBranchRequest& request, std::size_t max_branches) {
  return FieldError("branch_id", std::string(RulesOf(request.trans_type).article_name) +
                                     " transaction may have at most " +
                                     std::to_string(max_branches) + " branches; gid " +
                                     request.gid + " has them all");
}

}  // namespace settle::engine
