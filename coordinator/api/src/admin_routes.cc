// An operator's routes under /api/admin: the participant hosts' gates and their Retry now, the
// actions on one transaction (resolve, redirect, resend, pause, resume), and what operators
// read (the audit log, the clock, the counts). Bulk actions are bulk_routes.cc's; the console's
// own pages are console_routes.cc's.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "api_server_impl.h"
#include "settle/api/audit_json.h"
#include "settle/api/request_parser.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/type_rules.h"

namespace settle::api {
namespace {

constexpr const char* kAuditRefused =
    "the audit trail is shown to operators (read and admin tokens), not to a client token";

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

}  // namespace settle::api
