#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/protocol.h"
#include "settle/core/status.h"
#include "settle/core/trace_context.h"

namespace settle::sdk {

// One call of a participant's branch URL, as the coordinator (confirm, cancel, action,
// compensate) or the initiating client (try) makes it: docs/protocol.md §4.1 and §6.1.
struct BranchRequest {
  std::string path;  // the URL path the call arrived on
  std::string gid;
  TransType trans_type = TransType::kTcc;
  std::string branch_id;
  BranchOp op = BranchOp::kTry;
  std::string body;  // the branch data, byte for byte
  std::multimap<std::string, std::string> headers;
  // The call's W3C trace context as its caller sent it (its `traceparent` and `tracestate`
  // headers; gRPC: metadata), read by ReadCallTrace (settle/sdk/call_trace.h): trace.trace_id
  // is the transaction's trace and trace.span_id the span of this call, a new one for each
  // attempt settled makes (a Try or XA action the initiator makes itself carries the caller's
  // span, TransOptions::traceparent), with trace.flags and trace.state (the tracestate) as
  // received. A participant's tracing starts its own span as a child of it (parent: span_id).
  // Empty (trace.empty()) when the call carried no traceparent or an invalid one.
  TraceContext trace;
};

// What a branch handler answers. The SDK turns it into the protocol's answer with
// ToHttpAnswer (settle/core/http_status.h, docs/protocol.md §6.2): OK -> 200 SUCCESS (with
// `body` if set); Conflict, NotFound, AlreadyExists -> 409 FAILURE (the business said no: the
// transaction rolls back); Pending -> 425 ONGOING (ask again later); InvalidArgument -> 400,
// Unavailable -> 503, Internal -> 500, all three retried by the coordinator.
struct BranchReply {
  Status status;
  std::string body;  // optional JSON answer for OK; default {"dtm_result":"SUCCESS"}

  static BranchReply Success(std::string body = "") { return {Status::Ok(), std::move(body)}; }
  static BranchReply Failure(std::string why) { return {Status::Conflict(std::move(why)), ""}; }
  static BranchReply Ongoing(std::string why) { return {Status::Pending(std::move(why)), ""}; }
  static BranchReply Error(Status why) { return {std::move(why), ""}; }
};

// Reads gid, trans_type, branch_id and op from a branch URL's query parameters. The Node SDK
// sends branch_type instead of op for Try calls; it is accepted when op is absent.
// InvalidArgument naming the parameter when one is missing or invalid.
Status ParseBranchQuery(const std::multimap<std::string, std::string>& params,
                        BranchRequest& request);

// InvalidArgument naming the key when the query repeats one of the protocol's keys (gid,
// trans_type, branch_id, op, branch_type, phase2_url, dtm; names compared without regard to
// case: RepeatedProtocolKey, settle/core/protocol_keys.h). A coordinator that appends its own
// keys after a client's query (one older than that check) sends the client's values first, and
// they would be read; the call is answered 400 before its signature, the barrier or a handler
// (docs/protocol.md §6.1): retried by the coordinator, never read as FAILURE. Branch and XA
// URLs alike.
Status CheckProtocolKeysOnce(const std::multimap<std::string, std::string>& params);

// The same for a gRPC call's metadata `keys`: InvalidArgument naming the dtm-* key that arrives
// more than once (any case).
Status CheckDtmMetadataOnce(const std::vector<std::string_view>& keys);

}  // namespace settle::sdk
