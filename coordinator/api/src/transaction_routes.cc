// DTM's API for a transaction's client under /api/settle and /api/dtmsvr (docs/protocol.md
// §3): newGid, prepare, prepareWorkflow, the branch registrations, submit and abort, an
// admin's forceStop and resetNextCronTime, and the topics' subscriptions. Each parses its
// request, makes it its caller's, and answers what the Coordinator says of it.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "api_server_impl.h"
#include "settle/api/request_parser.h"
#include "settle/core/protocol.h"
#include "settle/core/trace_context.h"
#include "settle/engine/request_fields.h"

namespace settle::api {
namespace {

// docs/protocol.md §1.5: the members of a request that settle read nowhere and DTM's SDKs do
// not send, when it ignored them.
constexpr const char* kIgnoredFieldsHeader = "Settle-Ignored-Fields";

// Parses with `parse`, then answers what `act` says of the parsed request, naming the unknown
// members it had (the engine's list, escaped for a header).
template <typename Request, typename Act>
asio::awaitable<HttpAnswer> ParseThen(Result<Request> parsed, Act act) {
  if (!parsed) co_return ToHttpAnswer(parsed.status());
  const std::vector<std::string> unknown = engine::UnknownFields(parsed->unread_fields);
  const Status status = co_await act(std::move(*parsed));
  HttpAnswer answer = ToHttpAnswer(status);
  if (!unknown.empty()) {
    answer.headers.emplace_back(kIgnoredFieldsHeader, engine::ListOfFields(unknown));
  }
  co_return answer;
}

// The parsed request, made `who`'s (engine/ownership.h).
template <typename Request>
Result<Request> AskedBy(Result<Request> parsed, const engine::Requester& who) {
  if (parsed) parsed->requester = who;
  return parsed;
}

// The parsed request with the caller's span, read from its traceparent and tracestate headers.
template <typename Request>
Result<Request> Traced(Result<Request> parsed, const net::Request& req) {
  if (!parsed) return parsed;
  parsed->trace = ReadTraceHeaders(req.headers);
  return parsed;
}

}  // namespace

// registerBranch (and its older names): {"dtm_result":"SUCCESS"}, with settled's countersignature
// of the branch's Try when it signs and the registration named it (docs/protocol.md §3.4, §4.9).
CallerRouteHandler ApiServer::Impl::RegisterBranchHandler() {
  drive::Coordinator& c = coordinator;
  return [this, &c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
    drive::Registration registration;
    HttpAnswer answer = co_await ParseThen(
        AskedBy(ParseRegisterBranch(req.body), RequesterOf(caller)),
        [&c, &registration](engine::RegisterBranchRequest r) -> asio::awaitable<Status> {
          Result<drive::Registration> registered = co_await c.Register(std::move(r));
          if (!registered) co_return registered.status();
          registration = std::move(*registered);
          co_return Status::Ok();
        });
    if (answer.status == 200 && !registration.try_signature.empty()) {
      nlohmann::json body = nlohmann::json::parse(answer.body);
      nlohmann::json fields = nlohmann::json::object();
      for (const auto& [name, value] : registration.try_signature) fields[name] = value;
      body[std::string(kTrySignatureMember)] = std::move(fields);
      answer.body = body.dump();
    }
    co_return answer;
  };
}

// DTM's API for a transaction's client (docs/protocol.md §3), and an admin's forceStop and
// resetNextCronTime.
void ApiServer::Impl::RegisterTransactionRoutes() {
  drive::Coordinator& c = coordinator;
  AddApiRoute("GET", "/newGid", Access::kClient,
              [&c](net::Request&) -> asio::awaitable<HttpAnswer> {
                const nlohmann::json body = {{"gid", c.NewGid()}, {"dtm_result", "SUCCESS"}};
                co_return JsonAnswer(body.dump());
              });
  AddApiRoute("POST", "/prepare", Access::kClient,
              CallerRouteHandler([this, &c](net::Request& req, const Caller& caller) {
                return ParseThen(
                    Traced(AskedBy(ParsePrepare(req.body), RequesterOf(caller)), req),
                    [&c](engine::PrepareRequest r) { return c.Prepare(std::move(r)); });
              }));
  AddApiRoute(
      "POST", "/prepareWorkflow", Access::kClient,
      CallerRouteHandler(
          [this, &c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
            auto parsed = Traced(AskedBy(ParsePrepareWorkflow(req.body), RequesterOf(caller)), req);
            if (!parsed) co_return ToHttpAnswer(parsed.status());
            const std::vector<std::string> unknown = engine::UnknownFields(parsed->unread_fields);
            auto stored = co_await c.PrepareWorkflow(std::move(*parsed));
            HttpAnswer answer =
                stored ? JsonAnswer(ProgressResponseBody(*stored)) : ToHttpAnswer(stored.status());
            if (!unknown.empty()) {
              answer.headers.emplace_back(kIgnoredFieldsHeader, engine::ListOfFields(unknown));
            }
            co_return answer;
          }));
  AddApiRoute("POST", "/registerBranch", Access::kClient,
              CallerRouteHandler(RegisterBranchHandler()));
  AddApiRoute("POST", "/registerTccBranch", Access::kClient,
              CallerRouteHandler(RegisterBranchHandler()));  // older Node and Ruby SDKs
  AddApiRoute("POST", "/registerXaBranch", Access::kClient,
              CallerRouteHandler(RegisterBranchHandler()));  // older SDKs
  AddApiRoute("POST", "/submit", Access::kClient,
              CallerRouteHandler([this, &c](net::Request& req, const Caller& caller) {
                return ParseThen(Traced(AskedBy(ParseSubmit(req.body), RequesterOf(caller)), req),
                                 [&c](engine::SubmitRequest r) { return c.Submit(std::move(r)); });
              }));
  AddApiRoute("POST", "/abort", Access::kClient,
              CallerRouteHandler([this, &c](net::Request& req, const Caller& caller) {
                return ParseThen(AskedBy(ParseAbort(req.body), RequesterOf(caller)),
                                 [&c](engine::AbortRequest r) { return c.Abort(std::move(r)); });
              }));
  AddApiRoute("POST", "/forceStop", Access::kAdmin,
              CallerRouteHandler([&c](net::Request& req, const Caller& caller) {
                return ParseThen(ParseForceStop(req.body),
                                 [&c, actor = caller.name](engine::ForceStopRequest r) {
                                   r.actor = actor;
                                   return c.ForceStop(std::move(r));
                                 });
              }));
  AddApiRoute("POST", "/resetNextCronTime", Access::kAdmin,
              CallerRouteHandler([&c](net::Request& req, const Caller& caller) {
                return ParseThen(ParseRetryNow(req.body),
                                 [&c, actor = caller.name](engine::RetryNowRequest r) {
                                   r.actor = actor;
                                   return c.ResetNextCronTime(std::move(r));
                                 });
              }));
}

// Topics: GET with a query string as DTM's SDKs call them, or POST with a JSON body.
void ApiServer::Impl::RegisterTopicRoutes() {
  drive::Coordinator& c = coordinator;
  auto subscribe = [&c](Result<engine::SubscribeRequest> parsed) {
    return ParseThen(std::move(parsed),
                     [&c](engine::SubscribeRequest r) { return c.Subscribe(std::move(r)); });
  };
  auto unsubscribe = [&c](Result<engine::SubscribeRequest> parsed) {
    return ParseThen(std::move(parsed),
                     [&c](engine::SubscribeRequest r) { return c.Unsubscribe(std::move(r)); });
  };
  AddApiRoute("GET", "/subscribe", Access::kClient,
              CallerRouteHandler([this, subscribe](net::Request& req, const Caller& caller) {
                return subscribe(AskedBy(ParseSubscribeQuery(req.params), RequesterOf(caller)));
              }));
  AddApiRoute("POST", "/subscribe", Access::kClient,
              CallerRouteHandler([this, subscribe](net::Request& req, const Caller& caller) {
                return subscribe(AskedBy(ParseSubscribeBody(req.body), RequesterOf(caller)));
              }));
  AddApiRoute("GET", "/unsubscribe", Access::kClient,
              CallerRouteHandler([this, unsubscribe](net::Request& req, const Caller& caller) {
                return unsubscribe(AskedBy(ParseSubscribeQuery(req.params), RequesterOf(caller)));
              }));
  AddApiRoute("POST", "/unsubscribe", Access::kClient,
              CallerRouteHandler([this, unsubscribe](net::Request& req, const Caller& caller) {
                return unsubscribe(AskedBy(ParseSubscribeBody(req.body), RequesterOf(caller)));
              }));
  AddApiRoute("POST", "/deleteTopic", Access::kAdmin, [&c](net::Request& req) {
    return ParseThen(ParseDeleteTopic(req.body),
                     [&c](engine::DeleteTopicRequest r) { return c.DeleteTopic(std::move(r)); });
  });
}

}  // namespace settle::api
