#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "settle/core/branch_result.h"
#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/core/trace_context.h"

namespace settle::engine {

// One call of a participant's confirm/cancel/action/compensate URL (docs/protocol.md §4.1).
struct BranchCall {
  std::string gid;
  TransType trans_type = TransType::kTcc;
  std::string branch_id;
  BranchOp op = BranchOp::kConfirm;
  std::string url;   // as registered; the caller appends gid, trans_type, branch_id, op
  std::string data;  // POSTed byte for byte when non-empty; otherwise the call is a GET
  std::map<std::string, std::string> headers;  // branch_headers
  Duration timeout{3000};                      // request_timeout
  TimePoint created;  // the transaction's create_time: who is oldest among those held
  // This call's span: a child of the transaction's, a new one per attempt; sent as the
  // traceparent (and tracestate) header or metadata, in place of any in branch_headers.
  TraceContext trace;
  // The op the call names (the op query parameter, the dtm-op metadata) when it is not `op`'s
  // own name: a workflow's resume names the workflow (TypeRules::call_op).
  std::string op_name;
};

// The op `call` names on the wire.
inline std::string_view WireOp(const BranchCall& call) {
  return call.op_name.empty() ? ToString(call.op) : std::string_view(call.op_name);
}

struct BranchOutcome {
  BranchResult result = BranchResult::kUnknown;
  int http_status = 0;  // 0 when no HTTP answer arrived
  // Why, for the branch row's last_error and the log: "HTTP 500: <start of body>",
  // "connection refused", "timed out after 3000 ms". Empty on SUCCESS.
  std::string detail;
  // How long the call took, for metrics; 0 when the caller does not measure.
  std::chrono::microseconds elapsed{0};
  // Set when the call was not made because its host's gate held it (its circuit is open, or
  // its cap of calls in flight is reached): nothing was learnt, so it is no attempt, no
  // failure, and nothing to store; the gate wakes the transaction when it may call, and at
  // the latest it looks again at this time.
  std::optional<TimePoint> not_called_until;
  // The host's circuit is open (this call was not made, or was a call that failed while it
  // is): the circuit's own log lines speak for the host, so the call is not logged as a warning.
  bool circuit_open = false;
  // A gRPC call's status code, when it ended with one (the participant's or gRPC's own).
  std::optional<int> grpc_code;
};

}  // namespace settle::engine
