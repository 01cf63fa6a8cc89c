#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"
#include "settle/engine/requests.h"
#include "settle/storage/store.h"

// Turns request bodies and query strings into the engine's typed requests (requests.h). Pure
// functions: no I/O, no state, never throw. They check what JSON decides: that the body is an
// object, members' types, required members' presence, custom_data's own JSON; every rule about
// the values (URLs, identifiers, counts, orders, lengths) is the engine's, checked by the
// coordinator for every front door. Every failure is InvalidArgument with a message that starts
// with the field ("gid: ...", "steps[1]: ...", "body: ..."). Null means absent, as DTM's client
// SDKs expect. The members of a body (and of its steps) that nothing read are listed in the
// request's unread_fields, for the engine to tell DTM's from unknown ones (request_fields.h);
// a query string's parameters are not.
namespace settle::api {

inline constexpr std::size_t kMaxJsonDepth = 64;

Result<engine::PrepareRequest> ParsePrepare(std::string_view body);
// prepareWorkflow's body: a prepare's, with a workflow's custom_data {"name","data"}.
Result<engine::PrepareRequest> ParsePrepareWorkflow(std::string_view body);
Result<engine::RegisterBranchRequest> ParseRegisterBranch(std::string_view body);
Result<engine::SubmitRequest> ParseSubmit(std::string_view body);
Result<engine::AbortRequest> ParseAbort(std::string_view body);
// resetNextCronTime: {"gid": "...", "reason": "..."}, the reason (Settle's, for the audit
// trail) optional. The actor is not in the body: the caller sets it from the request's token.
Result<engine::RetryNowRequest> ParseRetryNow(std::string_view body);
// POST /api/admin/hosts/retryNow (Settle's admin API): {"host": "http://host:port"}, a
// participant host as /api/admin/hosts names it (a branch URL on that host names it too; its
// path is ignored) or "other" (the overflow gate). Answers it as given (the route reads it as
// its gate's key, calls::OriginOf). Missing, empty or not a string: InvalidArgument naming
// "host"; a member other than "host" and "reason" (optional text, for the audit trail):
// InvalidArgument naming it (this route is Settle's own).
struct RetryHostRequest {
  std::string host;
  std::string reason;
};
Result<RetryHostRequest> ParseRetryHost(std::string_view body);
// forceStop: {"gid": "...", "reason": "..."}, the reason optional. The actor is not in the
// body: the caller sets it from the request's token.
Result<engine::ForceStopRequest> ParseForceStop(std::string_view body);
// POST /api/admin/pause and /api/admin/resume: {"gid", "reason"}, nothing else (400 naming an
// unknown member).
Result<engine::PauseRequest> ParsePause(std::string_view body);
// POST /api/admin/resolve: {"gid", "branch_id", "op", "outcome", "reason"}; POST
// /api/admin/redirect: {"gid", "branch_id", "op", "url", "reason"}; every member a string, all
// required (their values are the coordinator's to check), nothing else.
Result<engine::ResolveRequest> ParseResolve(std::string_view body);
Result<engine::RedirectRequest> ParseRedirect(std::string_view body);

// The JSON inside other wire formats (the gRPC door's DtmRequest carries its steps and
// custom_data as JSON strings), read by the same rules:
// - a saga's or a message's steps, as the JSON array `steps_json` holds them
//   ([{"action":...,"compensate":...}]); empty or null: none. Their unread members go to
//   `unread` ("steps[0].x").
Status ParseStepsJson(std::string_view steps_json, std::vector<engine::RequestStep>& steps,
                      engine::UnreadFields& unread);
// - options.custom_data of a transaction of `type`: a saga's concurrent and orders, a message's
//   delay, into `options`.
Status ReadCustomData(TransType type, engine::RequestOptions& options);

// Query strings (already split into parameters).
using QueryParams = std::multimap<std::string, std::string>;
Result<std::string> ParseQueryGid(const QueryParams& params);
// /query's payloads=true|false (absent: false): whether branch bodies are shown.
Result<bool> ParseQueryPayloads(const QueryParams& params);
// subscribe and unsubscribe as DTM's SDKs call them: topic, url, remark (unsubscribe ignores
// it) in the query string; the same as a JSON body; deleteTopic's {"topic": "..."}.
Result<engine::SubscribeRequest> ParseSubscribeQuery(const QueryParams& params);
Result<engine::SubscribeRequest> ParseSubscribeBody(std::string_view body);
Result<engine::DeleteTopicRequest> ParseDeleteTopic(std::string_view body);
// status, trans_type, stuck, limit (1..1000, default 100), position (from next_position), and
// the search: gid_prefix (a gid's characters), create_time_start and create_time_end (RFC 3339
// or Unix milliseconds, both ends included; DTM's createTimeStart and createTimeEnd too, empty
// as absent), host (a participant host or a branch URL on it, kept as its origin). Bad values:
// InvalidArgument naming the parameter.
Result<storage::ListQuery> ParseListQuery(const QueryParams& params);
// GET /api/admin/audit: gid, actor, action (each exact), limit (1..1000, 100) and position (an
// earlier page's next_position); a bad one is InvalidArgument naming it.
Result<storage::AuditQuery> ParseAuditQuery(const QueryParams& params);
// /query's position: the index of the first branch to show, from an earlier page's
// next_position (absent: 0).
Result<std::size_t> ParseQueryPosition(const QueryParams& params);
// /topics' position: the name after which topics are shown, an earlier page's next_position
// (absent: "", from the first).
Result<std::string> ParseTopicsPosition(const QueryParams& params);

}  // namespace settle::api
