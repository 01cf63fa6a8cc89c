#include "settle/engine/transaction_types.h"

#include "settle/engine/msg_engine.h"
#include "settle/engine/new_records.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/saga_engine.h"

namespace settle::engine {
namespace {

// Every participant address a request names: its steps' and its back-check's.
std::vector<std::string> UrlsOf(const std::vector<SagaStep>& steps,
                                const std::string& query_prepared) {
  std::vector<std::string> urls{query_prepared};
  for (const SagaStep& step : steps) {
    urls.push_back(step.action_url);
    urls.push_back(step.compensate_url);
  }
  return urls;
}

}  // namespace

Status CheckPrepare(const PrepareRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  const auto types = {TransType::kTcc, TransType::kXa, TransType::kMsg};
  if (Status s = CheckTypeOf(request.trans_type, "prepare", types); !s.ok()) return s;
  if (Status s = CheckOptions(request.options); !s.ok()) return s;
  if (request.trans_type != TransType::kMsg) return Status::Ok();
  if (Status s = CheckMsg(request.steps, request.payloads, request.query_prepared, true); !s.ok()) {
    return s;
  }
  return CheckGrpcHeaders(request.options.branch_headers,
                          UrlsOf(request.steps, request.query_prepared));
}

Status CheckSubmit(const SubmitRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  if (Status s = CheckOptions(request.options); !s.ok()) return s;
  Status checked = Status::Ok();
  switch (request.trans_type) {
    case TransType::kSaga:
      checked = CheckSaga(request);
      break;
    case TransType::kMsg:
      checked = CheckMsg(request.steps, request.payloads, request.query_prepared, false);
      break;
    case TransType::kTcc:
    case TransType::kXa:
      break;
  }
  if (!checked.ok()) return checked;
  return CheckGrpcHeaders(request.options.branch_headers,
                          UrlsOf(request.steps, request.query_prepared));
}

Status CheckAbort(const AbortRequest& request) {
  if (Status s = CheckGid(request.gid); !s.ok()) return s;
  const auto types = {TransType::kTcc, TransType::kXa, TransType::kMsg};
  if (Status s = CheckTypeOf(request.trans_type, "abort", types); !s.ok()) return s;
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

SubmitPlan PlanSubmit(TransType type) {
  switch (type) {
    case TransType::kSaga:
      return {.moves_prepared = false, .creates = true, .carries_content = true};
    case TransType::kMsg:
      // The submit of a prepared message keeps the rows of its prepare, as DTM does.
      return {.moves_prepared = true,
              .creates = true,
              .carries_content = true,
              .repeat_rules = {.query_prepared_optional = true, .custom_data_ignored = true}};
    case TransType::kTcc:
    case TransType::kXa:
      break;
  }
  return {.moves_prepared = true, .creates = false};
}

AbortPlan PlanAbort(TransType type) {
  // As in DTM, only a prepared message fails: a failed one may have delivered steps before it
  // gave up, which an abort's 200 must not suggest otherwise.
  if (type == TransType::kMsg) return {.to = GlobalStatus::kFailed, .drives = false};
  return {.to = GlobalStatus::kAborting, .drives = true};
}

Result<storage::Transaction> BuildPrepared(const PrepareRequest& request,
                                           const TopicSubscribers& subscribers,
                                           const TransactionDefaults& defaults, TimePoint now) {
  storage::Transaction tx;
  tx.global = NewGlobal(request.gid, request.trans_type, GlobalStatus::kPrepared, request.options,
                        defaults, now);
  tx.global.next_cron_time = now + tx.global.options.timeout_to_fail;
  tx.global.options.request_fingerprint = FingerprintOf(request);
  if (request.trans_type != TransType::kMsg) return tx;
  auto rows = MsgRows(request.gid, request.steps, request.payloads, subscribers, now);
  if (!rows) return rows.status();
  tx.branches.push_back(MsgBackCheckRow(request.gid, request.query_prepared, now));
  for (storage::BranchRecord& row : *rows) tx.branches.push_back(std::move(row));
  return tx;
}

Result<storage::Transaction> BuildSubmitted(const SubmitRequest& request,
                                            const TopicSubscribers& subscribers,
                                            const TransactionDefaults& defaults, TimePoint now) {
  storage::Transaction tx;
  tx.global = NewGlobal(request.gid, request.trans_type, GlobalStatus::kSubmitted, request.options,
                        defaults, now);
  tx.global.options.request_fingerprint = FingerprintOf(request);
  switch (request.trans_type) {
    case TransType::kSaga:
      tx.branches = SagaRows(request, now);
      return tx;
    case TransType::kMsg: {
      auto rows = MsgRows(request.gid, request.steps, request.payloads, subscribers, now);
      if (!rows) return rows.status();
      tx.branches = std::move(*rows);
      return tx;
    }
    case TransType::kTcc:
    case TransType::kXa:
      break;
  }
  return Status::Conflict("a " + std::string(ToString(request.trans_type)) +
                          " transaction is created by its prepare, not its submit");
}

}  // namespace settle::engine
