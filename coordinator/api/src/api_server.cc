// ApiServer itself: its Impl built (the HTTP server, the console, the route metrics), the route
// table filled from the route groups, the metrics page's text, and the public calls. How a
// request is judged and answered is in request_serving.cc; each group of routes has a file of
// its own (api_server_impl.h names them).
#include "settle/api/api_server.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "api_server_impl.h"
#include "settle/metrics/prometheus_text.h"

namespace settle::api {
namespace {

constexpr const char* kPrefixes[] = {"/api/settle", "/api/dtmsvr"};

}  // namespace

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

void ApiServer::Impl::AddApiRoute(const char* method, const std::string& path, Access access,
                                  RouteHandler handler) {
  for (const char* prefix : kPrefixes) AddRoute(method, prefix + path, access, handler);
}

void ApiServer::Impl::AddApiRoute(const char* method, const std::string& path, Access access,
                                  CallerRouteHandler handler) {
  for (const char* prefix : kPrefixes) AddRoute(method, prefix + path, access, handler);
}

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

std::string ApiServer::Impl::MetricsText() const {
  metrics::PrometheusText out;
  if (write_metrics) write_metrics(out);
  std::map<std::string, const RouteMetrics*> routes_by_label;
  for (const auto& [label, metrics] : route_metrics) routes_by_label.emplace(label, metrics.get());
  WriteRouteMetrics(out, routes_by_label);
  return out.Take();
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
