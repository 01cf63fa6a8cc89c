#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"

namespace settle::coordinator {

// Branches one TCC or XA may register (each is two rows): bounds how large a client can make
// one transaction, which every pass loads whole.
inline constexpr std::size_t kMaxTccBranches = 1000;
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
  std::map<int, std::vector<int>> orders;  // from custom_data; validated against the steps
  std::string custom_data;                 // verbatim
  std::optional<Duration> delay;           // message: from custom_data's "delay"
  bool wait_result = false;
};

// A saga step, or a message step (no compensate; the action may be topic://NAME).
struct SagaStep {
  std::string action_url;
  std::string compensate_url;  // empty: the step needs no compensation
  std::string payload;
};

// TCC, XA or message.
struct PrepareRequest {
  std::string gid;
  RequestOptions options;
  TransType trans_type = TransType::kTcc;
  std::vector<SagaStep> steps;  // message only
  std::string query_prepared;   // message only
};

// TCC or XA.
struct RegisterBranchRequest {
  std::string gid;
  std::string branch_id;
  std::string data;         // forwarded byte for byte; empty: the branch is called with GET
  std::string confirm_url;  // TCC
  std::string cancel_url;   // TCC
  TransType trans_type = TransType::kTcc;
  std::string url;  // XA: phase 2, called with op=commit or op=rollback
};

struct SubmitRequest {
  std::string gid;
  TransType trans_type = TransType::kTcc;
  RequestOptions options;
  std::vector<SagaStep> steps;  // saga and message
  std::string query_prepared;   // message: kept from the prepare when there was one
};

// A receiver of a topic's messages (DTM's subscribe and unsubscribe; remark is ignored by
// unsubscribe).
struct SubscribeRequest {
  std::string topic;
  std::string url;
  std::string remark;
};

// An operator's forceStop: `reason` (may be empty) and `actor` (the name of the token that
// asked, never the token) are stored in the transaction's rollback_reason and logged.
struct ForceStopRequest {
  std::string gid;
  std::string reason;
  std::string actor;
};

// TCC, XA or message.
struct AbortRequest {
  std::string gid;
  std::string rollback_reason;
  bool wait_result = false;
  TransType trans_type = TransType::kTcc;
};

}  // namespace settle::coordinator
