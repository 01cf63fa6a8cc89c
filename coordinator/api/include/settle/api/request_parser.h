#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/drive/requests.h"
#include "settle/storage/store.h"

// Turns request bodies and query strings into requests. Pure functions: no I/O, no state,
// never throw. Every failure is InvalidArgument with a message that starts with the field
// ("gid: ...", "steps[1].action: ...", "body: ..."). Unknown fields are ignored and null
// means absent, as DTM's client SDKs expect.
namespace settle::coordinator {

inline constexpr std::size_t kMaxSagaSteps = 1000;
inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxReasonLength = 1024;

Result<PrepareRequest> ParsePrepare(std::string_view body);
Result<RegisterBranchRequest> ParseRegisterBranch(std::string_view body);
Result<SubmitRequest> ParseSubmit(std::string_view body);
Result<AbortRequest> ParseAbort(std::string_view body);
// resetNextCronTime: {"gid": "..."}.
Result<std::string> ParseGidBody(std::string_view body);
// forceStop: {"gid": "...", "reason": "..."}, the reason optional and at most kMaxReasonLength
// bytes. The actor is not in the body: the caller sets it from the request's token.
Result<ForceStopRequest> ParseForceStop(std::string_view body);

// Query strings (already split into parameters).
using QueryParams = std::multimap<std::string, std::string>;
Result<std::string> ParseQueryGid(const QueryParams& params);
// subscribe and unsubscribe as DTM's SDKs call them: topic, url, remark (unsubscribe ignores
// it) in the query string; the same as a JSON body; deleteTopic's {"topic": "..."}.
Result<SubscribeRequest> ParseSubscribeQuery(const QueryParams& params);
Result<SubscribeRequest> ParseSubscribeBody(std::string_view body);
Result<std::string> ParseTopicBody(std::string_view body);
// status, trans_type, stuck, limit (1..1000, default 100), position (from next_position).
Result<storage::ListQuery> ParseListQuery(const QueryParams& params);

}  // namespace settle::coordinator
