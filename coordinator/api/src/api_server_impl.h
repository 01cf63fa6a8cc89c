#pragma once

// ApiServer's insides, shared by the files that make it up: api_server.cc (the server, its
// route table and its metrics), request_serving.cc (how one request is judged and answered),
// and one file per group of routes: console_routes.cc, transaction_routes.cc,
// read_routes.cc, admin_routes.cc and bulk_routes.cc.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "admin_console.h"
#include "http_route_metrics.h"
#include "read_slots.h"
#include "settle/api/api_server.h"
#include "settle/api/authentication.h"
#include "settle/api/rate_limiter.h"
#include "settle/api/refusal_log.h"
#include "settle/api/requester.h"
#include "settle/api/session_store.h"
#include "settle/api/transaction_json.h"
#include "settle/async/asio.h"
#include "settle/core/http_status.h"
#include "settle/core/status.h"
#include "settle/net/message.h"
#include "settle/net/route_table.h"

namespace settle::api {

inline constexpr const char* kJson = "application/json";

// Reads (query, all, topics) that build their answers at once; the others wait (ReadSlots).
inline constexpr std::size_t kConcurrentLargeReads = 2;

// A JSON route: parses, awaits the coordinator, answers.
using RouteHandler = std::function<asio::awaitable<HttpAnswer>(net::Request&)>;
// The same, for a route that needs to know who asked (to log it).
using CallerRouteHandler = std::function<asio::awaitable<HttpAnswer>(net::Request&, const Caller&)>;
// A whole answer of its own (content type, headers), given who asked, what they were granted
// and what says so.
using Identified = Authentication::Identified;
using PageHandler = std::function<net::Response(const net::Request&, const Identified&)>;

// {"message": text}, the body of every answer that is not from the protocol's vocabulary.
using net::MessageBody;

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
  // Registers every group of routes below. A group is defined in the file of its kind:
  // console_routes.cc (ping, metrics, the console), admin_routes.cc (hosts, an operator's
  // actions and reads), bulk_routes.cc, transaction_routes.cc (DTM's API for a transaction's
  // client, and topic subscriptions) and read_routes.cc (topics, query and all).
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
  // Defined beside the reads that use it (read_routes.cc).
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

}  // namespace settle::api
