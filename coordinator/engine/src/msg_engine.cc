#include "settle/engine/msg_engine.h"

#include <algorithm>
#include <optional>

#include "settle/engine/new_records.h"
#include "settle/engine/request_rules.h"

namespace settle::engine {
namespace {

// The back-check row's branch id, as DTM calls query_prepared.
constexpr const char* kMsgBackCheckBranch = "00";

// A step's action: an http(s) URL or a gRPC method (CheckUrl), or topic://NAME.
Status CheckMsgAction(const std::string& path, const std::string& action) {
  if (!action.starts_with(kTopicPrefix)) return CheckUrl(path, action, true);
  if (!IsValidTopic(action.substr(kTopicPrefix.size()))) {
    return FieldError(path, "a topic must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  return Status::Ok();
}

void WakeAt(Decision& d, TimePoint at) { d.wake_at = d.wake_at ? std::min(*d.wake_at, at) : at; }

void CallOrWait(const storage::Transaction& tx, std::size_t row, TimePoint now, Decision& d) {
  const TimePoint due = tx.branches[row].next_retry_at;
  if (due <= now) {
    d.calls.push_back(row);
  } else {
    WakeAt(d, due);
  }
}

Decision BackCheck(const storage::Transaction& tx, TimePoint now) {
  const storage::GlobalRecord& g = tx.global;
  Decision d;
  const auto check =
      std::find_if(tx.branches.begin(), tx.branches.end(),
                   [](const storage::BranchRecord& b) { return b.op == BranchOp::kMsg; });
  // Only a prepare stores a message as prepared, and a prepare always has its back-check.
  if (check == tx.branches.end()) return d;
  if (check->status == BranchStatus::kSucceed) {
    d.next_status = GlobalStatus::kSubmitted;
    d.reason = "query_prepared: the local transaction committed";
    return d;
  }
  if (check->status == BranchStatus::kFailed) {
    d.next_status = GlobalStatus::kFailed;
    d.reason = "query_prepared: the local transaction did not commit (" + check->last_error + ")";
    return d;
  }
  const TimePoint deadline = g.create_time + g.options.timeout_to_fail;
  if (now < deadline) {
    WakeAt(d, deadline);
    return d;
  }
  CallOrWait(tx, static_cast<std::size_t>(check - tx.branches.begin()), now, d);
  return d;
}

std::string GaveUpReason(const storage::BranchRecord& row, int retry_limit) {
  return "step " + std::to_string(row.seq) + " (branch " + row.branch_id + ", " + row.url +
         ") not delivered after " + std::to_string(row.failures) +
         " failed attempts (retry_limit " + std::to_string(retry_limit) + "): " + row.last_error;
}

Decision Deliver(const storage::Transaction& tx, TimePoint now) {
  const storage::GlobalRecord& g = tx.global;
  Decision d;
  const int limit = g.options.retry_limit;
  bool all_delivered = true;
  for (const storage::BranchRecord& b : tx.branches) {
    if (b.op != BranchOp::kAction || b.status == BranchStatus::kSucceed) continue;
    all_delivered = false;
    if (limit > 0 && b.failures >= limit) {
      d.next_status = GlobalStatus::kFailed;
      d.reason = GaveUpReason(b, limit);
      d.needs_operator = true;
      return d;
    }
  }
  if (all_delivered) {
    d.next_status = GlobalStatus::kSucceed;
    return d;
  }
  const TimePoint start = g.create_time + g.options.delay;
  if (now < start) {
    d.wake_at = start;
    return d;
  }
  // Rows are in (seq, branch_id) order: step by step, a topic's subscribers one after another.
  for (std::size_t i = 0; i < tx.branches.size(); ++i) {
    const storage::BranchRecord& b = tx.branches[i];
    if (b.op != BranchOp::kAction || b.status == BranchStatus::kSucceed) continue;
    CallOrWait(tx, i, now, d);
    if (!g.options.concurrent) break;
  }
  return d;
}

}  // namespace

Status CheckResend(const storage::Transaction& tx) {
  const storage::GlobalRecord& g = tx.global;
  const std::string gid = "gid " + g.gid;
  if (g.trans_type != TransType::kMsg) {
    return Status::Conflict(gid + " is a " + std::string(ToString(g.trans_type)) +
                            " transaction: only a message that gave up is sent again");
  }
  if (g.status != GlobalStatus::kFailed) {
    return Status::Conflict(gid + " is " + std::string(ToString(g.status)) +
                            ": only a message that gave up delivering is sent again");
  }
  const bool undelivered =
      std::any_of(tx.branches.begin(), tx.branches.end(), [](const storage::BranchRecord& b) {
        return b.op == BranchOp::kAction && b.status == BranchStatus::kPrepared;
      });
  if (g.force_stopped || !undelivered) {
    return Status::Conflict(gid + " did not give up delivering (" +
                            (g.force_stopped ? std::string("an operator stopped it")
                                             : std::string("it was never submitted")) +
                            "): it is not sent again");
  }
  return Status::Ok();
}

std::vector<std::size_t> ApplyResend(storage::Transaction& tx, TimePoint now) {
  storage::GlobalRecord& g = tx.global;
  g.status = GlobalStatus::kSubmitted;
  g.finish_time.reset();
  g.rollback_time.reset();
  g.rollback_reason.clear();
  g.stuck = false;
  g.next_cron_time = now;
  g.update_time = now;
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < tx.branches.size(); ++i) {
    storage::BranchRecord& b = tx.branches[i];
    if (b.op != BranchOp::kAction || b.status != BranchStatus::kPrepared) continue;
    b.failures = 0;
    b.next_retry_at = now;
    b.update_time = now;
    changed.push_back(i);
  }
  return changed;
}

Status CheckMsg(const std::vector<RequestStep>& steps, const std::vector<std::string>& payloads,
                const std::string& query_prepared, bool preparing) {
  if (Status s = CheckStepCounts("a message", steps.size(), payloads.size()); !s.ok()) return s;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string path = IndexPath("steps", i);
    if (Status s = CheckMsgAction(path + ".action", steps[i].action_url); !s.ok()) return s;
    if (!steps[i].compensate_url.empty()) {
      return FieldError(path + ".compensate", "a message step has nothing to compensate");
    }
  }
  return CheckUrl("query_prepared", query_prepared, preparing);
}

std::vector<std::string> TopicsOf(const std::vector<RequestStep>& steps) {
  std::vector<std::string> topics;
  for (const RequestStep& step : steps) {
    if (!step.action_url.starts_with(kTopicPrefix)) continue;
    std::string topic = step.action_url.substr(kTopicPrefix.size());
    if (std::find(topics.begin(), topics.end(), topic) == topics.end()) {
      topics.push_back(std::move(topic));
    }
  }
  return topics;
}

Result<std::vector<storage::BranchRecord>> MsgRows(const std::string& gid,
                                                   const std::vector<RequestStep>& steps,
                                                   const std::vector<std::string>& payloads,
                                                   const TopicSubscribers& subscribers,
                                                   TimePoint now) {
  std::vector<storage::BranchRecord> rows;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string& action = steps[i].action_url;
    const int seq = static_cast<int>(i);
    const std::string branch_id = BranchIdForIndex(i);
    const SharedBytes payload(payloads[i]);  // every delivery of a topic's carries it, stored once
    if (!action.starts_with(kTopicPrefix)) {
      rows.push_back(NewBranchRow(gid, branch_id, BranchOp::kAction, seq, action, payload, now));
      continue;
    }
    const std::string topic = action.substr(kTopicPrefix.size());
    const auto found = subscribers.find(topic);
    if (found == subscribers.end() || found->second.empty()) {
      return FieldError(IndexPath("steps", i) + ".action",
                        "topic " + topic + " has no subscribers");
    }
    const std::vector<std::string>& urls = found->second;
    for (std::size_t j = 0; j < urls.size(); ++j) {
      const std::string id = urls.size() == 1 ? branch_id : branch_id + "-" + BranchIdForIndex(j);
      rows.push_back(NewBranchRow(gid, id, BranchOp::kAction, seq, urls[j], payload, now));
    }
  }
  if (rows.size() > kMaxMsgDeliveries) {
    return FieldError("steps", "the message would make " + std::to_string(rows.size()) +
                                   " deliveries; at most " + std::to_string(kMaxMsgDeliveries));
  }
  return rows;
}

storage::BranchRecord MsgBackCheckRow(const std::string& gid, const std::string& query_prepared,
                                      TimePoint now) {
  return NewBranchRow(gid, kMsgBackCheckBranch, BranchOp::kMsg, -1, query_prepared, "", now);
}

Status CheckSubscription(const SubscribeRequest& request) {
  if (Status s = CheckTopic("topic", request.topic); !s.ok()) return s;
  if (Status s = CheckUrl("url", request.url, true); !s.ok()) return s;
  return CheckReason("remark", request.remark);
}

Status CheckUnsubscription(const SubscribeRequest& request) {
  if (Status s = CheckTopic("topic", request.topic); !s.ok()) return s;
  if (Status s = CheckStoredUrl("url", request.url, true); !s.ok()) return s;
  return CheckReason("remark", request.remark);
}

Decision DecideMsg(const storage::Transaction& tx, TimePoint now) {
  switch (tx.global.status) {
    case GlobalStatus::kPrepared:
      return BackCheck(tx, now);
    case GlobalStatus::kSubmitted:
      return Deliver(tx, now);
    case GlobalStatus::kAborting:  // a message never rolls back
    case GlobalStatus::kSucceed:
    case GlobalStatus::kFailed:
      return {};
  }
  return {};
}

namespace {

Status CheckMsgPrepare(const PrepareRequest& request) {
  return CheckMsg(request.steps, request.payloads, request.query_prepared, true);
}

Status CheckMsgSubmit(const SubmitRequest& request) {
  return CheckMsg(request.steps, request.payloads, request.query_prepared, false);
}

// A prepare's rows: the back-check, then the deliveries.
Result<std::vector<storage::BranchRecord>> PreparedMsgRows(const PrepareRequest& request,
                                                           const storage::TransOptions&,
                                                           const TopicSubscribers& subscribers,
                                                           TimePoint now) {
  auto deliveries = MsgRows(request.gid, request.steps, request.payloads, subscribers, now);
  if (!deliveries) return deliveries.status();
  std::vector<storage::BranchRecord> rows;
  rows.push_back(MsgBackCheckRow(request.gid, request.query_prepared, now));
  for (storage::BranchRecord& row : *deliveries) rows.push_back(std::move(row));
  return rows;
}

Result<std::vector<storage::BranchRecord>> SubmittedMsgRows(const SubmitRequest& request,
                                                            const TopicSubscribers& subscribers,
                                                            TimePoint now) {
  return MsgRows(request.gid, request.steps, request.payloads, subscribers, now);
}

// For each row: a prepared row of the op the status drives (the back-check while prepared,
// the deliveries while submitted).
std::vector<bool> MsgRowsStillCalled(const storage::Transaction& tx) {
  std::optional<BranchOp> op;
  if (tx.global.status == GlobalStatus::kPrepared) op = BranchOp::kMsg;
  if (tx.global.status == GlobalStatus::kSubmitted) op = BranchOp::kAction;
  return PreparedRowsOf(tx, op);
}

// A back-check's FAILURE: the local transaction did not commit. A receiver's refusal: asked
// again, there is nothing to roll back.
FailureMeaning MsgFailure(BranchOp op) {
  return op == BranchOp::kMsg ? FailureMeaning::kFinal : FailureMeaning::kRetried;
}

}  // namespace

const TypeRules& MsgRules() {
  static const TypeRules rules{
      .type = TransType::kMsg,
      .takes_prepare = true,
      .takes_abort = true,
      .carries_steps = true,
      .carries_query_prepared = true,
      .custom_data = {.object_required = true, .delay = true},
      .check_prepare = CheckMsgPrepare,
      .check_submit = CheckMsgSubmit,
      .prepared_rows = PreparedMsgRows,
      .submitted_rows = SubmittedMsgRows,
      // The submit of a prepared message keeps the rows of its prepare, as DTM does.
      .submit = {.moves_prepared = true,
                 .creates = true,
                 .carries_content = true,
                 .repeat_rules = {.query_prepared_optional = true, .custom_data_ignored = true}},
      // As in DTM, only a prepared message fails: a failed one may have delivered steps before
      // it gave up, which an abort's 200 must not suggest otherwise.
      .abort = {.to = GlobalStatus::kFailed, .drives = false},
      .decide = DecideMsg,
      .rows_still_called = MsgRowsStillCalled,
      .failure_of = MsgFailure,
      .article_name = "a message",
  };
  return rules;
}

}  // namespace settle::engine
