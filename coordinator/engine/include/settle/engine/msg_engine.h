#pragma once

#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/engine/decision.h"
#include "settle/engine/requests.h"
#include "settle/engine/type_rules.h"

namespace settle::engine {

// The message's descriptor (type_rules.h).
const TypeRules& MsgRules();

// A message's prepare (`preparing`) or submit (docs/protocol.md §3.3, §3.5): 1 to kMaxSagaSteps
// steps, each with an action that is an http(s) URL, a gRPC method or topic://NAME and no
// compensate, one payload per step, and a query_prepared URL (required when preparing).
// InvalidArgument naming the field otherwise.
Status CheckMsg(const std::vector<RequestStep>& steps, const std::vector<std::string>& payloads,
                const std::string& query_prepared, bool preparing);

// The topics the topic://NAME steps name, each once: what the caller reads the subscribers of.
std::vector<std::string> TopicsOf(const std::vector<RequestStep>& steps);

// A message's delivery rows: one per step (seq: the step index, the step's payload), one per
// subscriber for a topic://NAME step, numbered as DTM does ("02" for a topic of one
// subscriber, "02-01", "02-02", ... for more). InvalidArgument naming the step for a topic
// without subscribers, or naming steps for more than kMaxMsgDeliveries rows.
Result<std::vector<storage::BranchRecord>> MsgRows(const std::string& gid,
                                                   const std::vector<RequestStep>& steps,
                                                   const std::vector<std::string>& payloads,
                                                   const TopicSubscribers& subscribers,
                                                   TimePoint now);

// A prepared message's back-check row: branch "00", op msg, seq -1, at query_prepared.
storage::BranchRecord MsgBackCheckRow(const std::string& gid, const std::string& query_prepared,
                                      TimePoint now);

// A subscription: a topic name, an http(s) URL or a gRPC method (CheckUrl: its query names no
// protocol key), a remark of at most kMaxReasonLength bytes.
Status CheckSubscription(const SubscribeRequest& request);
// An unsubscribe: the same, but the URL's address alone (CheckStoredUrl), so that a subscriber
// stored before its query was checked can still be removed.
Status CheckUnsubscription(const SubscribeRequest& request);

// Transactional message (docs/protocol.md §2.1, §4.8). Its rows: the back-check (op msg,
// branch "00", seq -1) of a message that was prepared, and one action row per delivery (seq:
// the step index; a topic step has one row per subscriber).
// - prepared: waits for the client's submit or abort. Once timeout_to_fail has passed since
//   creation it asks the client's query_prepared URL (the back-check row) whether the local
//   transaction committed: SUCCESS -> submitted; FAILURE -> failed, nothing delivered;
//   ONGOING or an error -> asked again after the retry interval or the backoff.
// - submitted: nothing before create_time + delay. Then delivers row after row, in order (a
//   topic step's subscribers one after another, as DTM does), or with `concurrent` every row
//   at once, retrying each row
//   until its receiver answers SUCCESS (a FAILURE is retried like an error: a message has
//   nothing to roll back). Succeed once all are delivered. With retry_limit, a row that has
//   failed retry_limit times in a row ends the message failed (best-effort notification): a
//   change that needs an operator (Decision::needs_operator).
Decision DecideMsg(const storage::Transaction& tx, TimePoint now);

// A message that gave up delivering (retry_limit: failed, a delivery still pending), sent again
// by an operator (docs/operations.md): OK, or Conflict saying why it cannot be (not a message,
// not failed, failed for another reason: its back-check, a force stop).
Status CheckResend(const storage::Transaction& tx);
// The message submitted again, due `now`: its undelivered rows' failure counts start over (their
// history kept), its failure's reason and times cleared. Returns the indexes of the rows changed.
std::vector<std::size_t> ApplyResend(storage::Transaction& tx, TimePoint now);

}  // namespace settle::engine
