#include "settle/coordinator/api_server.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <exception>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

#include "settle/common/http_server.h"
#include "settle/coordinator/http_status.h"
#include "settle/coordinator/request_parser.h"
#include "settle/coordinator/transaction_json.h"

namespace settle::coordinator {
namespace {

constexpr const char* kPrefixes[] = {"/api/settle", "/api/dtmsvr"};
constexpr const char* kJson = "application/json";

using RouteHandler = std::function<HttpAnswer(const HttpRequest&)>;

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
  Impl(Coordinator& c, ApiServerOptions o);

  void Route(const char* method, const std::string& path, RouteHandler handler);
  void RegisterRoutes();
  void Serve(const HttpRequest& request, HttpResponse& response) const;

  Coordinator& coordinator;
  ApiServerOptions options;
  // "METHOD path" -> handler; filled before the server starts, read-only afterwards.
  std::unordered_map<std::string, RouteHandler> routes;
  HttpServer server;
};

ApiServer::Impl::Impl(Coordinator& c, ApiServerOptions o)
    : coordinator(c),
      options(o),
      server(
          HttpServerOptions{
              .threads = o.threads,
              .max_body_bytes = o.max_body_bytes,
              .keep_alive_timeout = o.keep_alive_timeout,
              .io_timeout = o.io_timeout,
              .refusal =
                  [max_body = o.max_body_bytes](int status, const std::string& problem) {
                    // protocol.md: every bad request is a 400 with {"message"} naming what.
                    return HttpResponse{400, kJson,
                                        MessageBody(status == 413
                                                        ? "body: larger than " +
                                                              std::to_string(max_body) + " bytes"
                                                        : "request: " + problem)};
                  }},
          [this](const HttpRequest& request, HttpResponse& response) {
            Serve(request, response);
          }) {}

void ApiServer::Impl::Route(const char* method, const std::string& path, RouteHandler handler) {
  for (const char* prefix : kPrefixes) {
    routes.emplace(std::string(method) + " " + prefix + path, handler);
  }
}

void ApiServer::Impl::Serve(const HttpRequest& request, HttpResponse& response) const {
  response.content_type = kJson;
  const auto route = routes.find(request.method + " " + request.path);
  if (route == routes.end()) {
    response.status = 404;
    response.body = MessageBody("no route for " + request.method + " " + request.path);
    return;
  }
  try {
    HttpAnswer answer = route->second(request);
    response.status = answer.status;
    response.body = std::move(answer.body);
  } catch (const std::exception& e) {
    spdlog::critical("{} {} failed with an exception (a bug): {}", request.method, request.path,
                     e.what());
    const HttpAnswer answer = ToHttpAnswer(Status::Internal(std::string("internal error: ") +
                                                            e.what()));
    response.status = answer.status;
    response.body = answer.body;
  }
}

void ApiServer::Impl::RegisterRoutes() {
  Coordinator& c = coordinator;
  routes.emplace("GET /api/ping", [](const HttpRequest&) {
    return HttpAnswer{200, R"({"msg":"pong"})"};
  });
  Route("GET", "/newGid", [&c](const HttpRequest&) {
    const nlohmann::json body = {{"gid", c.NewGid()}, {"dtm_result", "SUCCESS"}};
    return JsonAnswer(body.dump());
  });
  Route("POST", "/prepare", [&c](const HttpRequest& req) {
    return ParseThen<PrepareRequest>(ParsePrepare(req.body),
                                     [&c](const PrepareRequest& r) { return c.Prepare(r); });
  });
  auto register_branch = [&c](const HttpRequest& req) {
    return ParseThen<RegisterBranchRequest>(
        ParseRegisterBranch(req.body),
        [&c](const RegisterBranchRequest& r) { return c.RegisterBranch(r); });
  };
  Route("POST", "/registerBranch", register_branch);
  Route("POST", "/registerTccBranch", register_branch);  // older Node and Ruby SDKs
  Route("POST", "/registerXaBranch", [](const HttpRequest&) {
    return ToHttpAnswer(Status::InvalidArgument("trans_type: unsupported trans_type \"xa\""));
  });
  Route("POST", "/submit", [&c](const HttpRequest& req) {
    return ParseThen<SubmitRequest>(ParseSubmit(req.body),
                                    [&c](const SubmitRequest& r) { return c.Submit(r); });
  });
  Route("POST", "/abort", [&c](const HttpRequest& req) {
    return ParseThen<AbortRequest>(ParseAbort(req.body),
                                   [&c](const AbortRequest& r) { return c.Abort(r); });
  });
  Route("POST", "/forceStop", [&c](const HttpRequest& req) {
    return ParseThen<std::string>(ParseGidBody(req.body),
                                  [&c](const std::string& gid) { return c.ForceStop(gid); });
  });
  Route("POST", "/resetNextCronTime", [&c](const HttpRequest& req) {
    return ParseThen<std::string>(
        ParseGidBody(req.body), [&c](const std::string& gid) { return c.ResetNextCronTime(gid); });
  });
  Route("GET", "/query", [&c](const HttpRequest& req) {
    auto gid = ParseQueryGid(req.params);
    if (!gid) return ToHttpAnswer(gid.status());
    auto tx = c.Query(*gid);
    if (!tx) return ToHttpAnswer(tx.status());
    return JsonAnswer(QueryResponseBody(*tx));
  });
  Route("GET", "/all", [&c](const HttpRequest& req) {
    auto query = ParseListQuery(req.params);
    if (!query) return ToHttpAnswer(query.status());
    auto page = c.List(*query);
    if (!page) return ToHttpAnswer(page.status());
    return JsonAnswer(ListResponseBody(*page));
  });
}

ApiServer::ApiServer(Coordinator& coordinator, ApiServerOptions options)
    : impl_(std::make_unique<Impl>(coordinator, options)) {
  impl_->RegisterRoutes();
}

ApiServer::~ApiServer() { Stop(); }

Result<int> ApiServer::Start(const std::string& host, int port) {
  return impl_->server.Start(host, port);
}

void ApiServer::Stop() { impl_->server.Stop(); }

}  // namespace settle::coordinator
