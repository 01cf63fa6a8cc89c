#include "settle/api/api_server.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <any>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "admin_console.h"
#include "http_route_metrics.h"
#include "read_slots.h"
#include "returned_memory.h"
#include "settle/api/audit_json.h"
#include "settle/api/authentication.h"
#include "settle/api/bulk_request_parser.h"
#include "settle/api/job_json.h"
#include "settle/api/rate_limiter.h"
#include "settle/api/refusal_log.h"
#include "settle/api/request_parser.h"
#include "settle/api/requester.h"
#include "settle/api/session_store.h"
#include "settle/api/transaction_json.h"
#include "settle/core/ascii.h"
#include "settle/core/http_status.h"
#include "settle/core/log_text.h"
#include "settle/core/protocol.h"
#include "settle/core/trace_context.h"
#include "settle/engine/request_fields.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/type_rules.h"
#include "settle/net/route_table.h"

namespace settle::api {
namespace {

constexpr const char* kPrefixes[] = {"/api/settle", "/api/dtmsvr"};
constexpr const char* kJson = "application/json";
// The body of a request to a route open to anyone (Access::kNone: /api/ping, the console's
// pages and its sign-in form, a token at most), judged from its head: an anonymous client's
// body costs no more than this.
constexpr std::size_t kOpenRouteBodyBytes = 4096;

// A JSON route: parses, awaits the coordinator, answers.
using RouteHandler = std::function<asio::awaitable<HttpAnswer>(net::Request&)>;
// The same, for a route that needs to know who asked (to log it).
using CallerRouteHandler = std::function<asio::awaitable<HttpAnswer>(net::Request&, const Caller&)>;
// A whole answer of its own (content type, headers), given who asked, what they were granted
// and what says so.
using Identified = Authentication::Identified;
using PageHandler = std::function<net::Response(const net::Request&, const Identified&)>;

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

// Reads (query, all, topics) that build their answers at once; the others wait (ReadSlots).
constexpr std::size_t kConcurrentLargeReads = 2;
// A read that loaded this much gives the freed memory back to the system when it is done.
constexpr std::size_t kLargeReadBytes = std::size_t{8} << 20;

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

// What JudgeHead leaves in a head it lets through (net::Request::head_judgement) for Serve:
// who sent it, as its token, session or certificate said then.
struct HeadJudgement {
  Authentication::Identified identified;
};

// {"message": text}, the body of every answer that is not from the protocol's vocabulary.
std::string MessageBody(const std::string& text) {
  return ToHttpAnswer(Status::InvalidArgument(text)).body;
}

}  // namespace

struct ApiServer::Impl {
  Impl(drive::Coordinator& c, const Clock& clk, asio::io_context& context, ApiServerOptions o,
       MetricsWriter m, calls::HostGates* h, RefusalLog* r);

  // A route answers with `handler` (JSON) or, for pages and metrics, with `page`. Requests
  // granted less than `access` are refused before either runs.
  struct Route {
    Access access = Access::kAdmin;
    CallerRouteHandler handler;
    PageHandler page;
    RouteMetrics* metrics = nullptr;
  };

  // Adds `path` under each API prefix.
  void AddApiRoute(const char* method, const std::string& path, Access access,
                   RouteHandler handler);
  void AddApiRoute(const char* method, const std::string& path, Access access,
                   CallerRouteHandler handler);
  void AddRoute(const char* method, const std::string& full_path, Access access,
                RouteHandler handler);
  void AddRoute(const char* method, const std::string& full_path, Access access,
                CallerRouteHandler handler);
  void AddPage(const char* method, const std::string& full_path, Access access, PageHandler page);
  // Who sent the request and what says so: its Authorization header's token, or else its
  // live console session, or else its verified client certificate (Authentication's rule).
  // An unknown or expired session is set aside (Identified::stale_session), so that it hides
  // no certificate.
  Identified CallerOf(const net::Request& request) const;
  void RegisterRoutes();
  void RegisterConsoleRoutes();
  void RegisterHostRoutes();
  void RegisterTransactionActionRoutes();
  void RegisterOperatorReadRoutes();
  void RegisterTransactionRoutes();
  CallerRouteHandler RegisterBranchHandler();
  void RegisterTopicRoutes();
  void RegisterReadRoutes();
  // Bulk actions and their jobs (docs/operations.md, "Bulk actions").
  void RegisterBulkRoutes();
  // Answers `request`. One whose head JudgeHead let through (the HTTP server's requests)
  // carries its caller (HeadJudgement in Request::head_judgement), whose --rate-limit token
  // was taken and whose access was granted then: it is not judged again. Any other (Handle)
  // is judged here as JudgeHead judges a head (Admit).
  asio::awaitable<net::Response> Serve(net::Request& request);
  // The answer to a request its head alone refuses (no route: 404 or 405; Admit's 429, 401 or
  // 403; a route open to anyone with a body over kOpenRouteBodyBytes: 413, or 411 chunked),
  // counted in the route's metrics as Serve counts; nullopt when its body may be read and
  // Serve answer it, and then `head` carries who sent it (Request::head_judgement), so that
  // its token is judged once per request.
  net::HeadVerdict JudgeHead(net::Request& head) const;
  // Whether `identified` may ask `request` of a route that needs `needed`: a 429 when the
  // caller is over --rate-limit (before its token is judged, so that unknown tokens count
  // against their address; takes one of its tokens otherwise), a 401 or 403 when its token,
  // session or certificate does not grant `needed` (logged and counted); nullopt when it may.
  std::optional<net::Response> Admit(const net::Request& request, const Identified& identified,
                                     Access needed) const;
  // Why the request's token, session or certificate does not grant `needed`, logged and
  // counted; nullopt when it does.
  std::optional<Authentication::Refusal> Refuse(const net::Request& request,
                                                const Identified& identified, Access needed) const;
  // The same as a 401 or 403 answer.
  std::optional<HttpAnswer> Authorize(const net::Request& request, const Identified& identified,
                                      Access needed) const;
  // Why a console page that needs read access answers with its sign-in form (logged and
  // counted as the API's refusals are); nullopt when `identified` may see it.
  std::optional<RefusalReason> ConsoleRefusal(const net::Request& request,
                                              const Identified& identified) const;
  // A 429 when the request's caller, `identified`, is over --rate-limit (RateLimiter); nullopt
  // otherwise. /api/ping is never limited: it is what health checks and load balancers probe.
  std::optional<net::Response> RateLimited(const net::Request& request,
                                           const Identified& identified) const;
  std::string MetricsText() const;
  // Frees what a read loaded and, when it was large, hands the freed memory back to the
  // system (glibc keeps it otherwise: a burst of large reads would leave the process large).
  template <typename Loaded>
  static void ReleaseLargeRead(Loaded loaded, std::size_t answer_bytes);
  // What `caller` may see of what clients sent for participants (transaction_json.h): a
  // read-only token sees no body, header value or custom_data; admins and clients (who see
  // only their own transactions) see them all, as does everyone without authentication.
  Secrets SecretsFor(const Caller& caller) const {
    return authentication.enabled() && caller.access == Access::kRead ? Secrets::kHidden
                                                                      : Secrets::kShown;
  }
  // Whether `caller` is shown the audit trail: operators (read and admin access), and everyone
  // without authentication; not a client.
  bool ShowsAudit(const Caller& caller) const {
    return !authentication.enabled() || caller.access != Access::kClient;
  }
  // Who asks, for the coordinator's ownership rules and quotas.
  engine::Requester RequesterOf(const Caller& caller) const {
    return api::RequesterOf(caller, authentication.enabled());
  }
  RouteMetrics* AddMetrics(const std::string& label) {
    return route_metrics.emplace(label, std::make_unique<RouteMetrics>()).first->second.get();
  }

  drive::Coordinator& coordinator;
  const Clock& clock;
  ApiServerOptions options;
  Authentication authentication{options.tokens, options.client_certificates};
  std::unique_ptr<RefusalLog> own_refusals;  // when the constructor was given none
  RefusalLog& refusals;
  SessionStore sessions{clock, options.console_sessions};
  MetricsWriter write_metrics;
  // Filled before the server starts, read-only afterwards.
  net::RouteTable<Route> routes;
  // Route label -> its request metrics; the labels are fixed before the server starts.
  std::map<std::string, std::unique_ptr<RouteMetrics>> route_metrics;
  RouteMetrics* unmatched = nullptr;
  RouteMetrics* refused = nullptr;
  AdminConsole console;
  calls::HostGates* const hosts;                    // null: none
  std::function<drive::ClockReading()> read_clock;  // set before the server starts
  RateLimiter* rate_limiter = nullptr;              // set before the server starts; null: none
  drive::BulkJobs* bulk = nullptr;                  // set before the server starts; null: none
  ReadSlots read_slots{kConcurrentLargeReads};
  net::Server server;
};

namespace {

// Bytes a read loaded, roughly: what its records' strings hold.
std::size_t LoadedBytes(const std::optional<storage::Transaction>& tx) {
  if (!tx) return 0;
  std::size_t bytes = 0;
  for (const storage::BranchRecord& b : tx->branches) {
    bytes += b.data.size() + b.url.size() + b.last_error.size();
  }
  return bytes;
}
std::size_t LoadedBytes(const storage::ListPage& page) {
  std::size_t bytes = 0;
  for (const storage::GlobalRecord& g : page.transactions) {
    bytes += g.options.custom_data.size() + g.rollback_reason.size();
    for (const auto& [name, value] : g.options.branch_headers) bytes += name.size() + value.size();
  }
  return bytes;
}
std::size_t LoadedBytes(const std::vector<storage::Topic>& topics) {
  std::size_t bytes = 0;
  for (const storage::Topic& t : topics) {
    for (const storage::Subscriber& s : t.subscribers) bytes += s.url.size() + s.remark.size();
  }
  return bytes;
}

}  // namespace

template <typename Loaded>
void ApiServer::Impl::ReleaseLargeRead(Loaded loaded, std::size_t answer_bytes) {
  const std::size_t bytes = LoadedBytes(loaded) + answer_bytes;
  { Loaded gone = std::move(loaded); }
  if (bytes >= kLargeReadBytes) ReturnFreedMemory();
}

ApiServer::Impl::Impl(drive::Coordinator& c, const Clock& clk, asio::io_context& context,
                      ApiServerOptions o, MetricsWriter m, calls::HostGates* h, RefusalLog* r)
    : coordinator(c),
      clock(clk),
      options(std::move(o)),
      own_refusals(r == nullptr ? std::make_unique<RefusalLog>(clk) : nullptr),
      refusals(r == nullptr ? *own_refusals : *r),
      write_metrics(std::move(m)),
      console(options.tokens, sessions, options.client_certificates.enabled(),
              options.tls.enabled()),
      hosts(h),
      server(context,
             net::ServerOptions{
                 .limits = {.max_body_bytes = options.max_body_bytes},
                 .keep_alive_timeout = options.keep_alive_timeout,
                 .io_timeout = options.io_timeout,
                 .request_timeout = options.request_timeout,
                 .max_connections = options.max_connections,
                 .max_connections_per_peer = options.max_connections_per_peer,
                 .tls = options.tls,
                 .judge_head = [this](net::Request& head) { return JudgeHead(head); },
                 .refusal =
                     [this](int status, const std::string& problem) {
                       refused->Count(status, std::chrono::microseconds(0));
                       // docs/protocol.md §7.1: every refused request gets
                       // {"message"} naming what.
                       return net::Response{status, kJson, MessageBody(problem)};
                     },
                 .on_handshake_failure =
                     [this](const net::HandshakeFailure& failure) {
                       refusals.HandshakeFailed(ApiPort::kHttp, failure.address, failure.reason);
                     }},
             [this](net::Request& request) { return Serve(request); }) {
  unmatched = AddMetrics("unmatched");
  refused = AddMetrics("refused");
}

void ApiServer::Impl::AddRoute(const char* method, const std::string& full_path, Access access,
                               RouteHandler handler) {
  AddRoute(method, full_path, access,
           CallerRouteHandler([handler = std::move(handler)](net::Request& request, const Caller&) {
             return handler(request);
           }));
}

void ApiServer::Impl::AddRoute(const char* method, const std::string& full_path, Access access,
                               CallerRouteHandler handler) {
  RouteMetrics* metrics = AddMetrics(std::string(method) + " " + full_path);
  routes.Add(method, full_path, Route{access, std::move(handler), {}, metrics});
}

void ApiServer::Impl::AddPage(const char* method, const std::string& full_path, Access access,
                              PageHandler page) {
  RouteMetrics* metrics = AddMetrics(std::string(method) + " " + full_path);
  routes.Add(method, full_path, Route{access, {}, std::move(page), metrics});
}

namespace {

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

void ApiServer::Impl::AddApiRoute(const char* method, const std::string& path, Access access,
                                  RouteHandler handler) {
  for (const char* prefix : kPrefixes) AddRoute(method, prefix + path, access, handler);
}

void ApiServer::Impl::AddApiRoute(const char* method, const std::string& path, Access access,
                                  CallerRouteHandler handler) {
  for (const char* prefix : kPrefixes) AddRoute(method, prefix + path, access, handler);
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

namespace {

constexpr const char* kBodiesRefused =
    "payloads: branch bodies are shown to admin tokens and to the client that created the "
    "transaction, not to a read-only token";

constexpr const char* kAuditRefused =
    "the audit trail is shown to operators (read and admin tokens), not to a client token";

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

std::string ApiServer::Impl::MetricsText() const {
  metrics::PrometheusText out;
  if (write_metrics) write_metrics(out);
  std::map<std::string, const RouteMetrics*> routes_by_label;
  for (const auto& [label, metrics] : route_metrics) routes_by_label.emplace(label, metrics.get());
  WriteRouteMetrics(out, routes_by_label);
  return out.Take();
}

namespace {

// Settle's own routes for an operator's action on one transaction (docs/operations.md):
// answered with `ok` or {"message"} with 400 (a field), 404 (an unknown gid or row) or 409
// (a state that forbids it: finished, already paused, not pending).
HttpAnswer AdminAnswer(const Status& s, const nlohmann::json& ok) {
  if (s.code() == StatusCode::kNotFound) return HttpAnswer{404, MessageBody(s.message())};
  if (s.code() == StatusCode::kConflict) return HttpAnswer{409, MessageBody(s.message())};
  if (!s.ok()) return ToHttpAnswer(s);
  return JsonAnswer(ok.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

void ApiServer::Impl::RegisterRoutes() {
  RegisterConsoleRoutes();
  RegisterHostRoutes();
  RegisterTransactionActionRoutes();
  RegisterBulkRoutes();
  RegisterOperatorReadRoutes();
  RegisterTransactionRoutes();
  RegisterTopicRoutes();
  RegisterReadRoutes();
}

// Ping, metrics, and the console's pages and sign-in.
void ApiServer::Impl::RegisterConsoleRoutes() {
  AddRoute("GET", "/api/ping", Access::kNone, [](net::Request&) -> asio::awaitable<HttpAnswer> {
    co_return HttpAnswer{200, R"({"msg":"pong"})"};
  });
  AddPage("GET", "/api/metrics", Access::kRead, [this](const net::Request&, const Identified&) {
    return net::Response{200, metrics::PrometheusText::kContentType, MetricsText()};
  });
  // A browser pointed at the coordinator itself lands on the console.
  AddPage("GET", "/", Access::kNone,
          [](const net::Request&, const Identified&) { return AdminConsole::RedirectFromRoot(); });
  // The console's pages check access themselves: without it they answer with the sign-in form.
  AddPage("GET", "/admin", Access::kNone,
          [this](const net::Request& request, const Identified& identified) {
            return console.Page(identified.caller, ConsoleRefusal(request, identified));
          });
  AddPage("GET", "/admin/login.css", Access::kNone, [this](const net::Request&, const Identified&) {
    return console.Asset("/admin/login.css", std::nullopt);
  });
  for (const char* asset : {"/admin/console.js", "/admin/console.css"}) {
    AddPage("GET", asset, Access::kNone,
            [this](const net::Request& request, const Identified& identified) {
              return console.Asset(request.path, ConsoleRefusal(request, identified));
            });
  }
  AddPage("POST", "/admin/login", Access::kNone,
          [this](const net::Request& request, const Identified&) {
            AdminConsole::SignedIn signed_in = console.SignIn(request);
            if (signed_in.refused) {
              const bool empty = *signed_in.refused == RefusalReason::kNoCredentials;
              refusals.Refused(ApiPort::kHttp, request.remote_address, "POST /admin/login",
                               {true,
                                empty ? "the sign-in form had no token"
                                      : "the sign-in form's token is not accepted",
                                *signed_in.refused});
            }
            return std::move(signed_in.response);
          });
  AddPage(
      "POST", "/admin/logout", Access::kNone,
      [this](const net::Request& request, const Identified&) { return console.SignOut(request); });
  AddPage("GET", "/api/admin/whoami", Access::kRead,
          [this](const net::Request&, const Identified& identified) {
            return net::Response{200, kJson,
                                 WhoAmIResponseBody(identified.caller, authentication.enabled())};
          });
}

// The participant hosts' gates (docs/protocol.md §3.14).
void ApiServer::Impl::RegisterHostRoutes() {
  drive::Coordinator& c = coordinator;
  AddPage("GET", "/api/admin/hosts", Access::kRead, [this](const net::Request&, const Identified&) {
    return net::Response{
        200, kJson,
        HostsResponseBody(hosts == nullptr ? std::vector<calls::HostView>{} : hosts->Hosts())};
  });
  // Retry now for a host (docs/protocol.md §3.14): its oldest held transaction calls it at once.
  AddRoute("POST", "/api/admin/hosts/retryNow", Access::kAdmin,
           CallerRouteHandler(
               [this, &c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                 Result<RetryHostRequest> asked = ParseRetryHost(req.body);
                 if (!asked) co_return ToHttpAnswer(asked.status());
                 if (Status s = engine::CheckReason("reason", asked->reason); !s.ok()) {
                   co_return ToHttpAnswer(s);
                 }
                 const std::string gate = calls::GateKeyOf(asked->host);
                 if (gate.empty()) {
                   co_return ToHttpAnswer(
                       Status::InvalidArgument("host: not a participant host; expected "
                                               "scheme://host:port, as /api/admin/hosts names it"));
                 }
                 Result<std::string> gid = hosts == nullptr
                                               ? Status::NotFound("host " + gate + " has no gate")
                                               : hosts->RetryHost(gate);
                 // Settle's own route: 404 for a host no gate is kept for, 409 for one whose gate
                 // holds nothing, each {"message"} (no DTM vocabulary).
                 if (!gid && gid.status().code() == StatusCode::kNotFound) {
                   co_return HttpAnswer{404, MessageBody(gid.status().message())};
                 }
                 if (!gid && gid.status().code() == StatusCode::kConflict) {
                   co_return HttpAnswer{409, MessageBody(gid.status().message())};
                 }
                 if (!gid) co_return ToHttpAnswer(gid.status());
                 // Audited once it took effect: the probe is out, and harmless if this fails.
                 storage::AuditEntry audit;
                 audit.actor = caller.name;
                 audit.action = storage::kAuditRetryHost;
                 audit.gid = *gid;
                 audit.target = gate;
                 audit.parameters = "{}";
                 audit.reason = asked->reason;
                 if (Status s = co_await c.RecordAudit(std::move(audit)); !s.ok()) {
                   co_return ToHttpAnswer(s);
                 }
                 const nlohmann::json body = {{"host", gate}, {"gid", *gid}};
                 co_return JsonAnswer(body.dump());
               }));
}

// An operator's actions on one transaction: resolve, redirect, resend, pause and resume.
void ApiServer::Impl::RegisterTransactionActionRoutes() {
  drive::Coordinator& c = coordinator;
  AddRoute("POST", "/api/admin/resolve", Access::kAdmin,
           CallerRouteHandler(
               [&c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                 Result<engine::ResolveRequest> asked = ParseResolve(req.body);
                 if (!asked) co_return ToHttpAnswer(asked.status());
                 asked->actor = caller.name;
                 const nlohmann::json ok = {{"gid", asked->gid},
                                            {"branch_id", asked->branch_id},
                                            {"op", asked->op},
                                            {"outcome", asked->outcome}};
                 const Status s = co_await c.Resolve(std::move(*asked));
                 co_return AdminAnswer(s, ok);
               }));
  AddRoute("POST", "/api/admin/redirect", Access::kAdmin,
           CallerRouteHandler(
               [&c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                 Result<engine::RedirectRequest> asked = ParseRedirect(req.body);
                 if (!asked) co_return ToHttpAnswer(asked.status());
                 asked->actor = caller.name;
                 const nlohmann::json ok = {{"gid", asked->gid},
                                            {"branch_id", asked->branch_id},
                                            {"op", asked->op},
                                            {"url", asked->url}};
                 const Status s = co_await c.Redirect(std::move(*asked));
                 co_return AdminAnswer(s, ok);
               }));
  AddRoute("POST", "/api/admin/resend", Access::kAdmin,
           CallerRouteHandler(
               [&c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                 Result<engine::PauseRequest> asked = ParsePause(req.body);
                 if (!asked) co_return ToHttpAnswer(asked.status());
                 asked->actor = caller.name;
                 const nlohmann::json ok = {{"gid", asked->gid}, {"status", "submitted"}};
                 const Status s = co_await c.Resend(std::move(*asked));
                 co_return AdminAnswer(s, ok);
               }));
  // Pause and resume one transaction (docs/operations.md, "Pause and resume"): {"gid",
  // "paused"}.
  const auto pause_route = [&c](bool pausing) {
    return CallerRouteHandler(
        [&c, pausing](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
          Result<engine::PauseRequest> asked = ParsePause(req.body);
          if (!asked) co_return ToHttpAnswer(asked.status());
          asked->actor = caller.name;
          const nlohmann::json ok = {{"gid", asked->gid}, {"paused", pausing}};
          Status s;
          if (pausing) {
            s = co_await c.Pause(std::move(*asked));
          } else {
            s = co_await c.Resume(std::move(*asked));
          }
          co_return AdminAnswer(s, ok);
        });
  };
  AddRoute("POST", "/api/admin/pause", Access::kAdmin, pause_route(true));
  AddRoute("POST", "/api/admin/resume", Access::kAdmin, pause_route(false));
}

// What operators read: the audit log, the database's clock, the counts.
void ApiServer::Impl::RegisterOperatorReadRoutes() {
  drive::Coordinator& c = coordinator;
  AddRoute("GET", "/api/admin/audit", Access::kRead,
           CallerRouteHandler(
               [this, &c](net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                 if (!ShowsAudit(caller)) co_return HttpAnswer{403, MessageBody(kAuditRefused)};
                 auto query = ParseAuditQuery(req.params);
                 if (!query) co_return ToHttpAnswer(query.status());
                 auto page = co_await c.ListAudit(std::move(*query));
                 if (!page) co_return ToHttpAnswer(page.status());
                 co_return JsonAnswer(AuditResponseBody(*page));
               }));
  AddPage("GET", "/api/admin/clock", Access::kRead, [this](const net::Request&, const Identified&) {
    if (!read_clock) return net::Response{404, kJson, R"({"error":"no clock reading"})"};
    return net::Response{200, kJson, ClockResponseBody(read_clock())};
  });
  AddRoute("GET", "/api/admin/counts", Access::kRead,
           [&c](net::Request&) -> asio::awaitable<HttpAnswer> {
             auto counts = co_await c.CountUnfinished();
             if (!counts) co_return ToHttpAnswer(counts.status());
             FinishedSinceStart finished;
             for (const engine::TypeRules* rules : engine::AllTypeRules()) {
               finished.succeed += c.metrics().Finished(rules->type, GlobalStatus::kSucceed);
               finished.failed += c.metrics().Finished(rules->type, GlobalStatus::kFailed);
             }
             co_return JsonAnswer(CountsResponseBody(*counts, finished));
           });
}

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

// The reads that may load much: topics, query and all.
void ApiServer::Impl::RegisterReadRoutes() {
  drive::Coordinator& c = coordinator;
  // The reads that may load much: one of ReadSlots' slots each while they build their answer,
  // capped by --max-answer-bytes, and the memory of a large one handed back to the system.
  // Each answers what its caller may see (engine/ownership.h).
  AddApiRoute("GET", "/topics", Access::kRead,
              CallerRouteHandler([this, &c](net::Request& req,
                                            const Caller& caller) -> asio::awaitable<HttpAnswer> {
                auto position = ParseTopicsPosition(req.params);
                if (!position) co_return ToHttpAnswer(position.status());
                ReadSlots::Slot slot = co_await read_slots.Take();
                auto topics = co_await c.Topics(RequesterOf(caller));
                if (!topics) co_return ToHttpAnswer(topics.status());
                HttpAnswer answer =
                    JsonAnswer(TopicsResponseBody(*topics, *position, options.max_answer_bytes));
                ReleaseLargeRead(std::move(*topics), answer.body.size());
                co_return answer;
              }));
  AddApiRoute("GET", "/query", Access::kRead,
              CallerRouteHandler([this, &c](net::Request& req,
                                            const Caller& caller) -> asio::awaitable<HttpAnswer> {
                auto gid = ParseQueryGid(req.params);
                if (!gid) co_return ToHttpAnswer(gid.status());
                auto payloads = ParseQueryPayloads(req.params);
                if (!payloads) co_return ToHttpAnswer(payloads.status());
                auto position = ParseQueryPosition(req.params);
                if (!position) co_return ToHttpAnswer(position.status());
                const Secrets secrets = SecretsFor(caller);
                if (*payloads && secrets == Secrets::kHidden) {
                  co_return HttpAnswer{403, MessageBody(kBodiesRefused)};
                }
                ReadSlots::Slot slot = co_await read_slots.Take();
                auto tx = co_await c.Query(*gid, RequesterOf(caller));
                if (!tx) co_return ToHttpAnswer(tx.status());
                // Operators see what operators did to it (a client sees its own transactions,
                // not who on the operators' side acted on them), on the first page only.
                std::optional<storage::AuditPage> audit;
                if (tx->has_value() && ShowsAudit(caller) && *position == 0) {
                  storage::AuditQuery of_gid;
                  of_gid.gid = *gid;
                  auto read = co_await c.ListAudit(std::move(of_gid));
                  if (!read) co_return ToHttpAnswer(read.status());
                  audit = std::move(*read);
                }
                HttpAnswer answer = JsonAnswer(
                    QueryResponseBody(*tx, *payloads, *position, options.max_answer_bytes, hosts,
                                      secrets, audit ? &audit->entries : nullptr));
                ReleaseLargeRead(std::move(*tx), answer.body.size());
                co_return answer;
              }));
  AddApiRoute("GET", "/all", Access::kRead,
              CallerRouteHandler([this, &c](net::Request& req,
                                            const Caller& caller) -> asio::awaitable<HttpAnswer> {
                auto query = ParseListQuery(req.params);
                if (!query) co_return ToHttpAnswer(query.status());
                ReadSlots::Slot slot = co_await read_slots.Take();
                auto page = co_await c.List(*query, RequesterOf(caller));
                if (!page) co_return ToHttpAnswer(page.status());
                HttpAnswer answer = JsonAnswer(
                    ListResponseBody(*page, options.max_answer_bytes, hosts, SecretsFor(caller)));
                ReleaseLargeRead(std::move(*page), answer.body.size());
                co_return answer;
              }));
}

void ApiServer::Impl::RegisterBulkRoutes() {
  // 404 for an unknown job, 409 for one whose state forbids it, each {"message"}; 503 while
  // this server runs no jobs.
  const auto job_answer = [](const Status& s) -> HttpAnswer {
    if (s.code() == StatusCode::kNotFound) return HttpAnswer{404, MessageBody(s.message())};
    if (s.code() == StatusCode::kConflict) return HttpAnswer{409, MessageBody(s.message())};
    return ToHttpAnswer(s);
  };
  const Status no_jobs = Status::Unavailable("bulk jobs are not run by this server");
  AddRoute("POST", "/api/admin/bulk", Access::kAdmin,
           CallerRouteHandler([this, job_answer, no_jobs](net::Request& req, const Caller& caller)
                                  -> asio::awaitable<HttpAnswer> {
             if (bulk == nullptr) co_return ToHttpAnswer(no_jobs);
             Result<BulkAsk> asked = ParseBulk(req.body, clock.Now());
             if (!asked) co_return ToHttpAnswer(asked.status());
             asked->request.actor = caller.name;
             if (asked->dry_run) {
               auto plan = co_await bulk->DryRun(asked->request);
               if (!plan) co_return job_answer(plan.status());
               co_return JsonAnswer(BulkPlanResponseBody(asked->request, *plan));
             }
             auto job = co_await bulk->Start(std::move(asked->request));
             if (!job) co_return job_answer(job.status());
             co_return HttpAnswer{202, JobResponseBody(*job, bulk->Running(job->id))};
           }));
  // Jobs are operators' actions, shown as the audit trail is: not to a client token.
  AddRoute("GET", "/api/admin/jobs", Access::kRead,
           CallerRouteHandler([this, job_answer, no_jobs](net::Request& req, const Caller& caller)
                                  -> asio::awaitable<HttpAnswer> {
             if (bulk == nullptr) co_return ToHttpAnswer(no_jobs);
             if (!ShowsAudit(caller)) {
               co_return HttpAnswer{403, MessageBody("bulk jobs are shown to operators (read and "
                                                     "admin tokens), not to a client token")};
             }
             if (auto id = req.params.find("id"); id != req.params.end()) {
               auto job = co_await bulk->Get(id->second);
               if (!job) co_return job_answer(job.status());
               if (!job->has_value()) {
                 co_return HttpAnswer{404, MessageBody("job " + id->second + " not found")};
               }
               co_return JsonAnswer(JobResponseBody(**job, bulk->Running(id->second)));
             }
             auto jobs = co_await bulk->List(50);
             if (!jobs) co_return job_answer(jobs.status());
             co_return JsonAnswer(JobsResponseBody(*jobs, *bulk));
           }));
  for (const bool cancel : {true, false}) {
    AddRoute("POST", cancel ? "/api/admin/jobs/cancel" : "/api/admin/jobs/resume", Access::kAdmin,
             CallerRouteHandler(
                 [this, job_answer, no_jobs, cancel](
                     net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                   if (bulk == nullptr) co_return ToHttpAnswer(no_jobs);
                   Result<JobAsk> asked = ParseJobAsk(req.body);
                   if (!asked) co_return ToHttpAnswer(asked.status());
                   if (cancel) {
                     const Status s = co_await bulk->Cancel(asked->id, caller.name, asked->reason);
                     if (!s.ok()) co_return job_answer(s);
                   } else {
                     auto resumed = co_await bulk->Resume(asked->id, caller.name, asked->reason);
                     if (!resumed) co_return job_answer(resumed.status());
                   }
                   auto job = co_await bulk->Get(asked->id);
                   if (!job) co_return job_answer(job.status());
                   if (!job->has_value()) co_return job_answer(Status::NotFound("job gone"));
                   co_return JsonAnswer(JobResponseBody(**job, bulk->Running(asked->id)));
                 }));
  }
}

ApiServer::ApiServer(drive::Coordinator& coordinator, const Clock& clock, asio::io_context& context,
                     ApiServerOptions options, MetricsWriter metrics, calls::HostGates* hosts,
                     RefusalLog* refusals)
    : impl_(std::make_unique<Impl>(coordinator, clock, context, std::move(options),
                                   std::move(metrics), hosts, refusals)) {
  impl_->RegisterRoutes();
}

ApiServer::~ApiServer() { Stop(); }

void ApiServer::SetClock(std::function<drive::ClockReading()> read) {
  impl_->read_clock = std::move(read);
}

void ApiServer::SetRateLimiter(RateLimiter* limiter) { impl_->rate_limiter = limiter; }

void ApiServer::SetBulkJobs(drive::BulkJobs* jobs) { impl_->bulk = jobs; }

Result<int> ApiServer::Start(const std::string& host, int port) {
  return impl_->server.Start(host, port);
}

void ApiServer::Stop() { impl_->server.Stop(); }

asio::awaitable<net::Response> ApiServer::Handle(net::Request& request) {
  // Judged whole here: no verdict a caller brings along stands for a judged head.
  request.head_judgement.reset();
  return impl_->Serve(request);
}

}  // namespace settle::api
