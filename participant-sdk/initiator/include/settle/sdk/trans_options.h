#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace settle::sdk {

// The options of docs/protocol.md §3.7 that a client may set on a transaction. Unset values are
// left to the coordinator's defaults.
struct TransOptions {
  // Submit and abort answer only after the coordinator's first pass over the transaction.
  bool wait_result = false;
  // TCC: aborted if still prepared this long after prepare. Saga: aborted and compensated if
  // its actions have not all succeeded this long after submit.
  std::optional<std::chrono::seconds> timeout_to_fail;
  std::optional<std::chrono::seconds> request_timeout;  // each branch call
  std::optional<std::chrono::seconds> retry_interval;   // before the first retry
  int retry_limit = 0;  // saga: attempts of an erroring action before the saga aborts; 0: none
  std::map<std::string, std::string> branch_headers;  // sent with every branch call

  // The W3C trace context (https://www.w3.org/TR/trace-context/) of the caller's current span,
  // e.g. from its OpenTelemetry context: "00-<trace-id>-<span-id>-<flags>" and its tracestate.
  // Sent as the `traceparent` and `tracestate` headers (gRPC: metadata) of every request the
  // initiator sends the coordinator for this transaction (prepare, submit, abort,
  // registerBranch), so that settled's span of the transaction is a child of the caller's, and
  // of the branch calls it makes itself (a TCC's Try, an XA action), which then have the
  // caller's span as their parent. Empty: none sent, and settled starts a trace of its own.
  // Checked by ParseTraceparent (settle/core/trace_context.h): a traceparent it refuses is not
  // sent, nor its tracestate; a tracestate it drops (over 512 bytes, or not printable ASCII)
  // is not sent. Either takes the place of a field of the same name (any case) in
  // ClientOptions::headers, GrpcClientOptions::metadata or branch_headers. Headers only:
  // never part of a request's body.
  std::string traceparent;
  std::string tracestate;
};

// The header fields (gRPC metadata) that `traceparent` and `tracestate` send, as
// TransOptions says: {"traceparent", ...} written as version 00 ("00-<trace-id>-<span-id>-
// <flags>": what a version 00 traceparent is already; a later version's by its first four
// fields), then {"tracestate", ...} when one is kept and not empty. Nothing for an empty or
// invalid traceparent.
std::vector<std::pair<std::string, std::string>> TraceFields(std::string_view traceparent,
                                                             std::string_view tracestate);

}  // namespace settle::sdk
