// How ApiServer judges and answers one request: who sent it (a token, a console session or a
// client certificate), whether its route lets it in (the rate limit, the access it needs, an
// open route's body limit), judged once from its head, and then its route's answer, timed in
// the route's metrics.
#include <spdlog/spdlog.h>

#include <any>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "api_server_impl.h"
#include "settle/core/ascii.h"
#include "settle/core/log_text.h"

namespace settle::api {
namespace {

// The body of a request to a route open to anyone (Access::kNone: /api/ping, the console's
// pages and its sign-in form, a token at most), judged from its head: an anonymous client's
// body costs no more than this.
constexpr std::size_t kOpenRouteBodyBytes = 4096;

// What JudgeHead leaves in a head it lets through (net::Request::head_judgement) for Serve:
// who sent it, as its token, session or certificate said then.
struct HeadJudgement {
  Authentication::Identified identified;
};

// Whether a browser says another site's page made the request: Sec-Fetch-Site other than
// same-origin or none (a typed address), or else an Origin that is not this server's.
bool FromAnotherSite(const net::Request& request) {
  if (const std::string* site = request.Header("Sec-Fetch-Site")) {
    return *site != "same-origin" && *site != "none";
  }
  const std::string* origin = request.Header("Origin");
  if (origin == nullptr) return false;
  const std::string* host = request.Header("Host");
  return host == nullptr || !EqualsIgnoreAsciiCase(*origin, "https://" + *host);
}

// A 401 or 403 as an answer.
net::Response AccessRefusal(HttpAnswer refusal) {
  net::Response response{refusal.status, kJson, std::move(refusal.body)};
  if (response.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
  return response;
}

// Why a head's body is over a route's own limit `max` (413; 411 when its length is not
// declared); nullopt when it is within.
std::optional<net::Response> OverRouteBodyLimit(const net::Request& head, std::size_t max) {
  if (max == 0) return std::nullopt;
  const std::string what = head.method + " " + head.path;
  if (head.Header("Transfer-Encoding") != nullptr) {
    return net::Response{411, kJson, MessageBody("Content-Length: required by " + what)};
  }
  const std::string* length = head.Header("Content-Length");
  std::uint64_t bytes = 0;
  if (length != nullptr) {
    const auto [end, error] =
        std::from_chars(length->data(), length->data() + length->size(), bytes);
    if (error != std::errc() || end != length->data() + length->size()) bytes = max + 1;
  }
  if (bytes <= max) return std::nullopt;
  return net::Response{413, kJson,
                       MessageBody("body: larger than " + std::to_string(max) +
                                   " bytes, the most " + what + " takes")};
}

}  // namespace

Identified ApiServer::Impl::CallerOf(const net::Request& request) const {
  if (const std::string* authorization = request.Header("Authorization")) {
    return authentication.Identify(authorization, request.peer_subject);
  }
  bool stale_session = false;
  if (options.tokens.enabled()) {
    if (const std::optional<std::string> id = SessionId(request)) {
      if (std::optional<Caller> caller = sessions.Find(*id)) {
        // A page on another site can make a browser send the cookie along, but cannot add this
        // header: a change authenticated by the cookie must come from the console's own
        // script.
        if (request.method != "GET" && request.Header("X-Settle-Console") == nullptr) {
          return {Caller{}, Identified::By::kSessionWithoutConsoleHeader};
        }
        return {std::move(*caller), Identified::By::kSession};
      }
      // Left from before a restart, a sign-out elsewhere or its expiry: judged without it.
      stale_session = true;
    }
  }
  Identified identified = authentication.Identify(nullptr, request.peer_subject);
  // A browser presents its certificate with every request to this origin, those a page of
  // another site makes (a form's POST, an image's GET) included: a certificate speaks only for
  // requests of this origin, or of no browser at all (no Sec-Fetch-Site or Origin).
  if (identified.by == Identified::By::kCertificate && FromAnotherSite(request)) {
    identified = {Caller{}, Identified::By::kCrossSiteCertificate};
  }
  identified.stale_session = stale_session;
  return identified;
}

std::optional<Authentication::Refusal> ApiServer::Impl::Refuse(const net::Request& request,
                                                               const Identified& identified,
                                                               Access needed) const {
  const std::string action = request.method + " " + request.path;
  std::optional<Authentication::Refusal> refusal = authentication.Authorize(
      identified, needed, action, request.peer_subject, "Authorization: Bearer <token>");
  if (refusal) refusals.Refused(ApiPort::kHttp, request.remote_address, action, *refusal);
  return refusal;
}

std::optional<HttpAnswer> ApiServer::Impl::Authorize(const net::Request& request,
                                                     const Identified& identified,
                                                     Access needed) const {
  const std::optional<Authentication::Refusal> refusal = Refuse(request, identified, needed);
  if (!refusal) return std::nullopt;
  return HttpAnswer{StatusOf(refusal->reason), MessageBody(refusal->message)};
}

std::optional<RefusalReason> ApiServer::Impl::ConsoleRefusal(const net::Request& request,
                                                             const Identified& identified) const {
  const std::optional<Authentication::Refusal> refusal = Refuse(request, identified, Access::kRead);
  if (!refusal) return std::nullopt;
  return refusal->reason;
}

std::optional<net::Response> ApiServer::Impl::Admit(const net::Request& request,
                                                    const Identified& identified,
                                                    Access needed) const {
  if (std::optional<net::Response> limited = RateLimited(request, identified)) return limited;
  if (std::optional<HttpAnswer> denied = Authorize(request, identified, needed)) {
    return AccessRefusal(std::move(*denied));
  }
  return std::nullopt;
}

net::HeadVerdict ApiServer::Impl::JudgeHead(net::Request& head) const {
  const auto found = routes.Find(head.method, head.path);
  std::optional<net::Response> refusal;
  RouteMetrics* metrics = unmatched;
  if (found.route == nullptr) {
    refusal = net::NoRoute(head, found.allow);
  } else {
    metrics = found.route->metrics;
    Identified identified = CallerOf(head);
    refusal = Admit(head, identified, found.route->access);
    if (!refusal) {
      refusal =
          OverRouteBodyLimit(head, found.route->access == Access::kNone ? kOpenRouteBodyBytes : 0);
    }
    if (!refusal) head.head_judgement = HeadJudgement{std::move(identified)};
  }
  if (refusal) metrics->Count(refusal->status, std::chrono::microseconds(0));
  return refusal;
}

std::optional<net::Response> ApiServer::Impl::RateLimited(const net::Request& request,
                                                          const Identified& identified) const {
  if (rate_limiter == nullptr || !rate_limiter->enabled() || request.path == "/api/ping") {
    return std::nullopt;
  }
  const std::string key = RateLimiter::KeyOf(authentication, identified, request.remote_address);
  const std::optional<Duration> wait = rate_limiter->Take(key, ApiPort::kHttp);
  if (!wait) return std::nullopt;
  net::Response response{429, kJson, MessageBody(rate_limiter->Message(*wait))};
  response.headers.emplace_back("Retry-After",
                                std::to_string(RateLimiter::RetryAfterSeconds(*wait)));
  return response;
}

asio::awaitable<net::Response> ApiServer::Impl::Serve(net::Request& request) {
  const MonoTime start = clock.Monotonic();
  net::Response response;
  response.content_type = kJson;
  const auto found = routes.Find(request.method, request.path);
  RouteMetrics* metrics = found.route == nullptr ? unmatched : found.route->metrics;
  // The head's verdict stands for the whole request: a console session signed out while its
  // body was arriving does not undo what its head was granted.
  const HeadJudgement* judged = std::any_cast<HeadJudgement>(&request.head_judgement);
  Identified identified;
  std::optional<net::Response> refusal;
  if (found.route != nullptr) {
    if (judged != nullptr) {
      identified = judged->identified;
    } else {
      identified = CallerOf(request);
      refusal = Admit(request, identified, found.route->access);
    }
  }
  if (found.route == nullptr) {
    response = net::NoRoute(request, found.allow);
  } else if (refusal) {
    response = std::move(*refusal);
  } else if (found.route->page) {
    response = found.route->page(request, identified);
  } else {
    HttpAnswer answer;
    try {
      answer = co_await found.route->handler(request, identified.caller);
    } catch (const std::exception& e) {
      spdlog::critical("{} {} failed with an exception (a bug): {}", request.method,
                       LogValue(request.path), LogValue(e.what()));
      answer = ToHttpAnswer(Status::Internal(std::string("internal error: ") + e.what()));
    }
    response.status = answer.status;
    response.body = std::move(answer.body);
    for (auto& header : answer.headers) response.headers.push_back(std::move(header));
  }
  metrics->Count(response.status,
                 std::chrono::duration_cast<std::chrono::microseconds>(clock.Monotonic() - start));
  co_return response;
}

}  // namespace settle::api
