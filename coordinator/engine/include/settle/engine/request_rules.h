#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"
#include "settle/engine/requests.h"

// The rules every transaction type's requests share. Each check answers OK or an
// InvalidArgument whose message starts with the field's path in the protocol's JSON names,
// then ": " and what is wrong ("steps[1].action: ..."): a front door that speaks other names
// rewords the path, up to the first ": ".
namespace settle::engine {

// InvalidArgument "path: problem".
Status FieldError(std::string_view path, std::string_view problem);

// "path[i]" and "path[i].member".
std::string IndexPath(std::string_view path, std::size_t index);

// A gid: required, 1..128 characters of [A-Za-z0-9_.:-].
Status CheckGid(const std::string& gid);
// A participant's address: an http(s) URL (docs/protocol.md §1.4) whose query names none of the
// protocol's keys (protocol_keys.h: settled appends them), or a gRPC method (grpc_target.h,
// §10.4); or empty when not `required`.
Status CheckUrl(std::string_view path, const std::string& url, bool required);
// The address alone, as CheckUrl checks it but for the protocol's keys: for a request that
// names a URL already stored (an unsubscribe), which may have been stored before they were
// refused.
Status CheckStoredUrl(std::string_view path, const std::string& url, bool required);
// A free text a client or an operator may store: at most kMaxReasonLength bytes.
Status CheckReason(std::string_view path, const std::string& text);
// A topic's name: required, 1..128 characters of [A-Za-z0-9_.:-].
Status CheckTopic(std::string_view path, const std::string& topic);
// A saga's or a message's steps (`kind`: "a saga", "a message"): 1 to kMaxSagaSteps of them,
// and exactly one payload per step.
Status CheckStepCounts(std::string_view kind, std::size_t steps, std::size_t payloads);
// The options every type takes: branch headers must be sendable as HTTP headers, and none of
// those settled sets itself (IsReservedBranchHeader, protocol_keys.h).
Status CheckOptions(const RequestOptions& options);
// The server's ceiling of how long a client may have settled keep a transaction waiting before
// it acts (--max-timeout-to-fail, docs/operations.md, "Hostile clients"): `timeout_to_fail` and
// a message's `delay` (custom_data.delay) at most `max_wait`; 400 naming the field and the
// flag. A zero `max_wait`: no ceiling but the protocol's ten years.
Status CheckWaitCeiling(const RequestOptions& options, Duration max_wait);
// The server's ceiling of how long one branch call may last (--max-branch-timeout,
// docs/operations.md, "Hostile clients"), since each call holds a connection and a pass that
// long: `request_timeout` at most `max_call`; 400 naming the field and the flag. A zero
// `max_call`: no ceiling.
Status CheckCallCeiling(const RequestOptions& options, Duration max_call);
// The branch headers a transaction with a gRPC participant among `urls` sends: each must be
// sendable as gRPC metadata (grpc_target.h) and none that gRPC sets itself
// (IsReservedGrpcBranchHeader); nothing to check without one. A TCC's or XA's
// registration checks its URLs against the headers its prepare stored.
Status CheckGrpcHeaders(const std::map<std::string, std::string>& branch_headers,
                        const std::vector<std::string>& urls);

}  // namespace settle::engine
