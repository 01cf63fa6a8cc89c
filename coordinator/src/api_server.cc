#include "settle/coordinator/api_server.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

#include "settle/common/http_server.h"
#include "admin_console.h"
#include "http_route_metrics.h"
#include "settle/coordinator/http_status.h"
#include "settle/coordinator/request_parser.h"
#include "settle/coordinator/transaction_json.h"

namespace settle::coordinator {
namespace {

constexpr const char* kPrefixes[] = {"/api/settle", "/api/dtmsvr"};
constexpr const char* kJson = "application/json";

using RouteHandler = std::function<HttpAnswer(const HttpRequest&)>;
// A whole answer of its own (content type, headers), given what the request was granted.
using PageHandler = std::function<HttpResponse(const HttpRequest&, Access)>;

// Parses with `parse`, then answers what `act` says of the parsed request.
template <typename Request>
HttpAnswer ParseThen(const Result<Request>& parsed,
                     const std::function<Status(const Request&)>& act) {
  if (!parsed) return ToHttpAnswer(parsed.status());
  return ToHttpAnswer(act(*parsed));
}

// {"message": text}, the body of every answer that is not from the protocol's vocabulary.
std::string MessageBody(const std::string& text) {
  return ToHttpAnswer(Status::InvalidArgument(text)).body;
}

}  // namespace

struct ApiServer::Impl {
  Impl(Coordinator& c, ApiServerOptions o, MetricsWriter m);

  // A route answers with `handler` (JSON) or, for pages and metrics, with `page`. Requests
  // granted less than `access` are refused before either runs.
  struct Route {
    Access access = Access::kAdmin;
    RouteHandler handler;
    PageHandler page;
    RouteMetrics* metrics = nullptr;
  };

  // Adds `path` under each API prefix.
  void AddApiRoute(const char* method, const std::string& path, Access access,
                   RouteHandler handler);
  void AddRoute(const char* method, const std::string& full_path, Access access,
                RouteHandler handler);
  void AddPage(const char* method, const std::string& full_path, Access access,
               PageHandler page);
  // What the request's Authorization header, or else its console session, grants.
  Access GrantOf(const HttpRequest& request) const;
  void RegisterRoutes();
  void Serve(const HttpRequest& request, HttpResponse& response) const;
  // 401 or 403 when the request's token does not grant `needed`; nullopt when it does.
  std::optional<HttpAnswer> Authorize(const HttpRequest& request, Access granted,
                                      Access needed) const;
  std::string MetricsText() const;

  Coordinator& coordinator;
  ApiServerOptions options;
  MetricsWriter write_metrics;
  // "METHOD path" -> route; filled before the server starts, read-only afterwards.
  std::unordered_map<std::string, Route> routes;
  // Route label -> its request metrics; the labels are fixed before the server starts.
  std::map<std::string, std::unique_ptr<RouteMetrics>> route_metrics;
  RouteMetrics* unmatched = nullptr;
  RouteMetrics* refused = nullptr;
  AdminConsole console;
  HttpServer server;
};

ApiServer::Impl::Impl(Coordinator& c, ApiServerOptions o, MetricsWriter m)
    : coordinator(c),
      options(std::move(o)),
      write_metrics(std::move(m)),
      console(options.tokens),
      server(
          HttpServerOptions{
              .threads = options.threads,
              .max_body_bytes = options.max_body_bytes,
              .keep_alive_timeout = options.keep_alive_timeout,
              .io_timeout = options.io_timeout,
              .max_connections = options.max_connections,
              .refusal =
                  [this](int status, const std::string& problem) {
                    refused->Count(status, std::chrono::microseconds(0));
                    // protocol.md: every bad request is a 400 with {"message"} naming what.
                    return HttpResponse{
                        400, kJson,
                        MessageBody(status == 413 ? "body: larger than " +
                                                        std::to_string(options.max_body_bytes) +
                                                        " bytes"
                                                  : "request: " + problem)};
                  }},
          [this](const HttpRequest& request, HttpResponse& response) {
            Serve(request, response);
          }) {
  auto add_label = [this](const std::string& label) {
    return route_metrics.emplace(label, std::make_unique<RouteMetrics>()).first->second.get();
  };
  unmatched = add_label("unmatched");
  refused = add_label("refused");
}

void ApiServer::Impl::AddRoute(const char* method, const std::string& full_path, Access access,
                               RouteHandler handler) {
  const std::string label = std::string(method) + " " + full_path;
  RouteMetrics* metrics =
      route_metrics.emplace(label, std::make_unique<RouteMetrics>()).first->second.get();
  routes.emplace(label, Route{access, std::move(handler), {}, metrics});
}

void ApiServer::Impl::AddPage(const char* method, const std::string& full_path, Access access,
                              PageHandler page) {
  const std::string label = std::string(method) + " " + full_path;
  RouteMetrics* metrics =
      route_metrics.emplace(label, std::make_unique<RouteMetrics>()).first->second.get();
  routes.emplace(label, Route{access, {}, std::move(page), metrics});
}

Access ApiServer::Impl::GrantOf(const HttpRequest& request) const {
  if (const std::string* authorization = request.Header("Authorization")) {
    return options.tokens.Grant(authorization);
  }
  if (!options.tokens.enabled()) return Access::kAdmin;
  const std::optional<std::string> session = SessionToken(request);
  if (!session) return Access::kNone;
  // A page on another site can make a browser send the cookie along, but cannot add this
  // header: a change authenticated by the cookie must come from the console's own script.
  if (request.method != "GET" && request.Header("X-Settle-Console") == nullptr) {
    return Access::kNone;
  }
  const std::string bearer = "Bearer " + *session;
  return options.tokens.Grant(&bearer);
}

void ApiServer::Impl::AddApiRoute(const char* method, const std::string& path, Access access,
                                  RouteHandler handler) {
  for (const char* prefix : kPrefixes) AddRoute(method, prefix + path, access, handler);
}

std::optional<HttpAnswer> ApiServer::Impl::Authorize(const HttpRequest& request,
                                                     Access granted, Access needed) const {
  if (granted >= needed) return std::nullopt;
  if (granted == Access::kNone) {
    return HttpAnswer{401, MessageBody("authorization: a bearer token is required "
                                       "(Authorization: Bearer <token>); none or an unknown one "
                                       "was sent")};
  }
  return HttpAnswer{403, MessageBody("authorization: this token grants " +
                                     std::string(ToString(granted)) + " access; " +
                                     request.method + " " + request.path + " needs " +
                                     std::string(ToString(needed)))};
}

void ApiServer::Impl::Serve(const HttpRequest& request, HttpResponse& response) const {
  const auto start = std::chrono::steady_clock::now();
  response.content_type = kJson;
  const auto found = routes.find(request.method + " " + request.path);
  RouteMetrics* metrics = found == routes.end() ? unmatched : found->second.metrics;
  if (found == routes.end()) {
    response.status = 404;
    response.body = MessageBody("no route for " + request.method + " " + request.path);
  } else if (const Access granted = GrantOf(request);
             std::optional<HttpAnswer> refusal = Authorize(request, granted, found->second.access)) {
    response.status = refusal->status;
    response.body = std::move(refusal->body);
    if (response.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
  } else if (found->second.page) {
    response = found->second.page(request, granted);
  } else {
    try {
      HttpAnswer answer = found->second.handler(request);
      response.status = answer.status;
      response.body = std::move(answer.body);
    } catch (const std::exception& e) {
      spdlog::critical("{} {} failed with an exception (a bug): {}", request.method, request.path,
                       e.what());
      const HttpAnswer answer =
          ToHttpAnswer(Status::Internal(std::string("internal error: ") + e.what()));
      response.status = answer.status;
      response.body = answer.body;
    }
  }
  metrics->Count(response.status, std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::steady_clock::now() - start));
}

std::string ApiServer::Impl::MetricsText() const {
  PrometheusText out;
  if (write_metrics) write_metrics(out);
  std::map<std::string, const RouteMetrics*> routes_by_label;
  for (const auto& [label, metrics] : route_metrics) routes_by_label.emplace(label, metrics.get());
  WriteRouteMetrics(out, routes_by_label);
  return out.Take();
}

void ApiServer::Impl::RegisterRoutes() {
  Coordinator& c = coordinator;
  AddRoute("GET", "/api/ping", Access::kNone,
           [](const HttpRequest&) { return HttpAnswer{200, R"({"msg":"pong"})"}; });
  AddPage("GET", "/api/metrics", Access::kRead, [this](const HttpRequest&, Access) {
    return HttpResponse{200, PrometheusText::kContentType, MetricsText()};
  });
  // The console's pages check access themselves: without it they answer with the sign-in form.
  AddPage("GET", "/admin", Access::kNone,
          [this](const HttpRequest&, Access granted) { return console.Page(granted); });
  for (const char* asset : {"/admin/console.js", "/admin/console.css", "/admin/login.css"}) {
    AddPage("GET", asset, Access::kNone, [this](const HttpRequest& request, Access granted) {
      return console.Asset(request.path, granted);
    });
  }
  AddPage("POST", "/admin/login", Access::kNone,
          [this](const HttpRequest& request, Access) { return console.SignIn(request); });
  AddPage("POST", "/admin/logout", Access::kNone,
          [this](const HttpRequest&, Access) { return console.SignOut(); });
  AddApiRoute("GET", "/newGid", Access::kClient, [&c](const HttpRequest&) {
    const nlohmann::json body = {{"gid", c.NewGid()}, {"dtm_result", "SUCCESS"}};
    return JsonAnswer(body.dump());
  });
  AddApiRoute("POST", "/prepare", Access::kClient, [&c](const HttpRequest& req) {
    return ParseThen<PrepareRequest>(ParsePrepare(req.body),
                                     [&c](const PrepareRequest& r) { return c.Prepare(r); });
  });
  auto register_branch = [&c](const HttpRequest& req) {
    return ParseThen<RegisterBranchRequest>(
        ParseRegisterBranch(req.body),
        [&c](const RegisterBranchRequest& r) { return c.RegisterBranch(r); });
  };
  AddApiRoute("POST", "/registerBranch", Access::kClient, register_branch);
  AddApiRoute("POST", "/registerTccBranch", Access::kClient, register_branch);  // older Node and Ruby SDKs
  AddApiRoute("POST", "/registerXaBranch", Access::kClient, [](const HttpRequest&) {
    return ToHttpAnswer(Status::InvalidArgument("trans_type: unsupported trans_type \"xa\""));
  });
  AddApiRoute("POST", "/submit", Access::kClient, [&c](const HttpRequest& req) {
    return ParseThen<SubmitRequest>(ParseSubmit(req.body),
                                    [&c](const SubmitRequest& r) { return c.Submit(r); });
  });
  AddApiRoute("POST", "/abort", Access::kClient, [&c](const HttpRequest& req) {
    return ParseThen<AbortRequest>(ParseAbort(req.body),
                                   [&c](const AbortRequest& r) { return c.Abort(r); });
  });
  AddApiRoute("POST", "/forceStop", Access::kAdmin, [&c](const HttpRequest& req) {
    return ParseThen<std::string>(ParseGidBody(req.body),
                                  [&c](const std::string& gid) { return c.ForceStop(gid); });
  });
  AddApiRoute("POST", "/resetNextCronTime", Access::kAdmin, [&c](const HttpRequest& req) {
    return ParseThen<std::string>(
        ParseGidBody(req.body), [&c](const std::string& gid) { return c.ResetNextCronTime(gid); });
  });
  AddApiRoute("GET", "/query", Access::kRead, [&c](const HttpRequest& req) {
    auto gid = ParseQueryGid(req.params);
    if (!gid) return ToHttpAnswer(gid.status());
    auto tx = c.Query(*gid);
    if (!tx) return ToHttpAnswer(tx.status());
    return JsonAnswer(QueryResponseBody(*tx));
  });
  AddApiRoute("GET", "/all", Access::kRead, [&c](const HttpRequest& req) {
    auto query = ParseListQuery(req.params);
    if (!query) return ToHttpAnswer(query.status());
    auto page = c.List(*query);
    if (!page) return ToHttpAnswer(page.status());
    return JsonAnswer(ListResponseBody(*page));
  });
}

ApiServer::ApiServer(Coordinator& coordinator, ApiServerOptions options, MetricsWriter metrics)
    : impl_(std::make_unique<Impl>(coordinator, std::move(options), std::move(metrics))) {
  impl_->RegisterRoutes();
}

ApiServer::~ApiServer() { Stop(); }

Result<int> ApiServer::Start(const std::string& host, int port) {
  return impl_->server.Start(host, port);
}

void ApiServer::Stop() { impl_->server.Stop(); }

}  // namespace settle::coordinator
