#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/core/trace_context.h"
#include "settle/engine/ownership.h"

namespace settle::engine {

// The typed requests of docs/protocol.md §3, as every front door hands them to the coordinator:
// a wire format (JSON over HTTP, protobuf over gRPC) is parsed into these by the front door,
// which checks only its own format's shapes (types, presence). Every rule about the values
// (identifiers, URLs, counts, orders, lengths) is the engine's: each type's home checks its
// requests (CheckPrepare, CheckSubmit, ... in transaction_types.h), naming the field in the
// protocol's JSON names ("steps[1].action: ...").

// The members a front door found in a request and read nowhere, by path in the protocol's JSON
// names ("wait_resutl", "steps[0].actoin"): the body's own, then each step's. The engine tells the
// ones DTM's client SDKs send from the unknown ones (request_fields.h).
using UnreadFields = std::vector<std::string>;

// Steps one saga or message may have.
inline constexpr std::size_t kMaxSagaSteps = 1000;
// A rollback_reason, a forceStop's reason, a subscription's remark: at most this many bytes.
inline constexpr std::size_t kMaxReasonLength = 1024;

// Branches one TCC or XA may register (each is two rows), and steps one workflow may record:
// bounds how large a client can make one transaction, which every pass loads whole.
inline constexpr std::size_t kMaxRegisteredBranches = 1000;
// Deliveries one message may make (a topic step makes one per subscriber).
inline constexpr std::size_t kMaxMsgDeliveries = 1000;
// A message step whose action is topic://NAME goes to every subscriber of NAME.
inline constexpr std::string_view kTopicPrefix = "topic://";

// Transaction options as the client sent them. Absent means "not sent", which includes null
// and, for the durations, 0 (docs/protocol.md §3.7: 0 means "use the default").
struct RequestOptions {
  std::optional<Duration> timeout_to_fail;
  std::optional<Duration> request_timeout;
  std::optional<Duration> retry_interval;
  int retry_limit = 0;  // 0: unlimited
  std::map<std::string, std::string> branch_headers;
  bool concurrent = false;                 // top-level `concurrent` or custom_data's
  std::map<int, std::vector<int>> orders;  // from custom_data: step -> the steps it waits for
  std::string custom_data;                 // verbatim
  std::optional<Duration> delay;           // message: from custom_data's "delay"
  std::optional<int> pause_after;          // from custom_data's "pause_after"
  bool wait_result = false;
  // A workflow's custom_data {"name","data"}: its name, and its input (decoded from the base64
  // its client sends).
  std::string workflow_name;
  std::string workflow_input;
};

// A saga step, or a message step (no compensate; the action may be topic://NAME). Its payload
// is the request's payloads[i], as the protocol sends them.
struct RequestStep {
  std::string action_url;
  std::string compensate_url;  // empty: the step needs no compensation
};

// A message's topics, each with its subscribers' URLs in subscription order: what the driving
// room reads from the store for the topic://NAME steps of a message it creates.
using TopicSubscribers = std::map<std::string, std::vector<std::string>>;

// The server-wide defaults a new transaction's options fall back to.
struct TransactionDefaults {
  Duration request_timeout{3000};
  Duration retry_interval{1000};
  // TCC, XA and message: how long one may stay prepared (saga: no default deadline).
  Duration prepared_timeout_to_fail{35000};
};

// TCC, XA, message or workflow (prepareWorkflow).
struct PrepareRequest {
  std::string gid;
  RequestOptions options;
  TransType trans_type = TransType::kTcc;
  std::vector<RequestStep> steps;     // message only
  std::vector<std::string> payloads;  // message only: one per step, the body of its deliveries
  std::string query_prepared;         // message and workflow
  UnreadFields unread_fields;
  Requester requester;  // who asks (ownership.h); not part of the wire format
  // The caller's span (its traceparent and tracestate headers or metadata), of which the
  // transaction's span is a child; none: the transaction starts a trace. Not part of the body.
  std::optional<TraceContext> trace;
};

// TCC or XA; or a step of a workflow's log.
struct RegisterBranchRequest {
  std::string gid;
  std::string branch_id;
  std::string data;         // forwarded byte for byte; empty: the branch is called with GET
  std::string confirm_url;  // TCC
  std::string cancel_url;   // TCC
  TransType trans_type = TransType::kTcc;
  std::string url;  // XA: phase 2, called with op=commit or op=rollback
  // TCC: the Try's URL (or gRPC method), which the initiator calls itself; optional. Not
  // stored: with it, a coordinator that signs answers with its countersignature of the Try
  // (docs/protocol.md §4.9).
  std::string try_url;
  UnreadFields unread_fields;
  Requester requester;  // who asks (ownership.h); not part of the wire format
  // Workflow: the step's op (action, commit, rollback, business) and its outcome (succeed or
  // failed), as sent; `data` is its output or its error.
  std::string op;
  std::string status;
};

struct SubmitRequest {
  std::string gid;
  TransType trans_type = TransType::kTcc;
  RequestOptions options;
  std::vector<RequestStep> steps;     // saga and message
  std::vector<std::string> payloads;  // saga and message: one per step
  std::string query_prepared;         // message: kept from the prepare when there was one
  UnreadFields unread_fields;
  Requester requester;  // who asks (ownership.h); not part of the wire format
  // The caller's span, as PrepareRequest's; used when the submit creates the transaction.
  std::optional<TraceContext> trace;
  // Workflow: how it ended, as its client reports it: "status" (succeed or failed),
  // "rollback_reason" and "result" (base64).
  std::map<std::string, std::string> req_extra;
};

// A receiver of a topic's messages (DTM's subscribe and unsubscribe; remark is ignored by
// unsubscribe).
struct SubscribeRequest {
  std::string topic;
  std::string url;
  std::string remark;
  UnreadFields unread_fields;
  Requester requester;  // who asks (ownership.h); not part of the wire format
};

// An operator's forceStop: `reason` (may be empty) and `actor` (the name of the token that
// asked, never the token) are stored in the transaction's rollback_reason and logged.
struct ForceStopRequest {
  std::string gid;
  std::string reason;
  std::string actor;
  UnreadFields unread_fields;
};

// Settle's admin API: pause or resume one transaction (docs/operations.md, "Pause and
// resume"). The reason is required.
struct PauseRequest {
  std::string gid;
  std::string reason;
  std::string actor;  // who asks: the caller's name, for the audit trail
  UnreadFields unread_fields;
};

// Settle's admin API: an operator resolves one pending branch call by hand, or redirects it to
// another url (docs/operations.md). The reason is required.
struct ResolveRequest {
  std::string gid;
  std::string branch_id;
  std::string op;       // as the protocol names it: "confirm", "action", ...
  std::string outcome;  // "succeed" or "failed"
  std::string reason;
  std::string actor;
};

struct RedirectRequest {
  std::string gid;
  std::string branch_id;
  std::string op;
  std::string url;
  std::string reason;
  std::string actor;
};

// TCC, XA or message.
struct AbortRequest {
  std::string gid;
  std::string rollback_reason;
  bool wait_result = false;
  TransType trans_type = TransType::kTcc;
  UnreadFields unread_fields;
  Requester requester;  // who asks (ownership.h); not part of the wire format
};

// resetNextCronTime.
struct RetryNowRequest {
  std::string gid;
  std::string reason;  // Settle's: the operator's, for the audit trail (optional on DTM's wire)
  std::string actor;   // who asks: the caller's name, for the audit trail
  UnreadFields unread_fields;
};

// deleteTopic.
struct DeleteTopicRequest {
  std::string topic;
  UnreadFields unread_fields;
};

}  // namespace settle::engine
