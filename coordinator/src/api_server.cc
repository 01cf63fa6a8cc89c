#include "settle/coordinator/api_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "settle/coordinator/http_status.h"
#include "settle/coordinator/request_parser.h"
#include "settle/coordinator/transaction_json.h"

namespace settle::coordinator {
namespace {

constexpr const char* kPrefixes[] = {"/api/settle", "/api/dtmsvr"};
constexpr const char* kJson = "application/json";

using RouteHandler = std::function<HttpAnswer(const httplib::Request&)>;

// httplib listens with a backlog of 5: a burst of new client connections overflows it, and
// each dropped SYN costs a one-second retransmit. Linux enlarges the queue of a listening
// socket when listen() is called on it again.
class Server final : public httplib::Server {
 public:
  bool WidenBacklog() { return ::listen(svr_sock_, SOMAXCONN) == 0; }
};

// Parses with `parse`, then answers what `act` says of the parsed request.
template <typename Request>
HttpAnswer ParseThen(const Result<Request>& parsed,
                     const std::function<Status(const Request&)>& act) {
  if (!parsed) return ToHttpAnswer(parsed.status());
  return ToHttpAnswer(act(*parsed));
}

void Send(httplib::Response& res, const HttpAnswer& answer) {
  res.status = answer.status;
  res.set_content(answer.body, kJson);
}

// {"message": text}, the body of every answer that is not from the protocol's vocabulary.
std::string MessageBody(const std::string& text) {
  return ToHttpAnswer(Status::InvalidArgument(text)).body;
}

}  // namespace

struct ApiServer::Impl {
  Impl(Coordinator& c, ApiServerOptions o) : coordinator(c), options(o) {}

  void Route(const char* method, const std::string& path, RouteHandler handler);
  void RegisterRoutes();
  void ConfigureServer();

  Coordinator& coordinator;
  ApiServerOptions options;
  Server server;
  std::thread thread;
  std::atomic<bool> listener_done{false};
};

void ApiServer::Impl::Route(const char* method, const std::string& path, RouteHandler handler) {
  auto serve = [handler](const httplib::Request& req, httplib::Response& res) {
    Send(res, handler(req));
  };
  for (const char* prefix : kPrefixes) {
    const std::string pattern = std::string(prefix) + path;
    if (std::string_view(method) == "GET") {
      server.Get(pattern, serve);
    } else {
      server.Post(pattern, serve);
    }
  }
}

void ApiServer::Impl::RegisterRoutes() {
  Coordinator& c = coordinator;
  server.Get("/api/ping", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"msg":"pong"})", kJson);
  });
  Route("GET", "/newGid", [&c](const httplib::Request&) {
    const nlohmann::json body = {{"gid", c.NewGid()}, {"dtm_result", "SUCCESS"}};
    return JsonAnswer(body.dump());
  });
  Route("POST", "/prepare", [&c](const httplib::Request& req) {
    return ParseThen<PrepareRequest>(ParsePrepare(req.body),
                                     [&c](const PrepareRequest& r) { return c.Prepare(r); });
  });
  auto register_branch = [&c](const httplib::Request& req) {
    return ParseThen<RegisterBranchRequest>(
        ParseRegisterBranch(req.body),
        [&c](const RegisterBranchRequest& r) { return c.RegisterBranch(r); });
  };
  Route("POST", "/registerBranch", register_branch);
  Route("POST", "/registerTccBranch", register_branch);  // older Node and Ruby SDKs
  Route("POST", "/registerXaBranch", [](const httplib::Request&) {
    return ToHttpAnswer(Status::InvalidArgument("trans_type: unsupported trans_type \"xa\""));
  });
  Route("POST", "/submit", [&c](const httplib::Request& req) {
    return ParseThen<SubmitRequest>(ParseSubmit(req.body),
                                    [&c](const SubmitRequest& r) { return c.Submit(r); });
  });
  Route("POST", "/abort", [&c](const httplib::Request& req) {
    return ParseThen<AbortRequest>(ParseAbort(req.body),
                                   [&c](const AbortRequest& r) { return c.Abort(r); });
  });
  Route("POST", "/forceStop", [&c](const httplib::Request& req) {
    return ParseThen<std::string>(ParseGidBody(req.body),
                                  [&c](const std::string& gid) { return c.ForceStop(gid); });
  });
  Route("POST", "/resetNextCronTime", [&c](const httplib::Request& req) {
    return ParseThen<std::string>(
        ParseGidBody(req.body), [&c](const std::string& gid) { return c.ResetNextCronTime(gid); });
  });
  Route("GET", "/query", [&c](const httplib::Request& req) {
    auto gid = ParseQueryGid(req.params);
    if (!gid) return ToHttpAnswer(gid.status());
    auto tx = c.Query(*gid);
    if (!tx) return ToHttpAnswer(tx.status());
    return JsonAnswer(QueryResponseBody(*tx));
  });
  Route("GET", "/all", [&c](const httplib::Request& req) {
    auto query = ParseListQuery(req.params);
    if (!query) return ToHttpAnswer(query.status());
    auto page = c.List(*query);
    if (!page) return ToHttpAnswer(page.status());
    return JsonAnswer(ListResponseBody(*page));
  });
}

void ApiServer::Impl::ConfigureServer() {
  const std::size_t threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(1'000'000);
  server.set_keep_alive_timeout(std::max<time_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options.keep_alive_timeout).count()));
  server.set_read_timeout(options.read_timeout);
  server.set_write_timeout(options.write_timeout);
  server.set_payload_max_length(options.max_body_bytes);
  const std::size_t max_body = options.max_body_bytes;
  // httplib answers some requests itself (no route, body too large, unparsable request) with
  // an empty body; give them the protocol's JSON shape. Answers from routes are left alone.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == 413) {
          res.status = 400;
          res.set_content(MessageBody("body: larger than " + std::to_string(max_body) + " bytes"),
                          kJson);
        } else if (res.status == 404) {
          res.set_content(MessageBody("no route for " + req.method + " " + req.path), kJson);
        } else {
          res.set_content(MessageBody("request: malformed HTTP request"), kJson);
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::critical("{} {} failed with an exception (a bug): {}", req.method, req.path, what);
        Send(res, ToHttpAnswer(Status::Internal("internal error: " + what)));
      });
}

ApiServer::ApiServer(Coordinator& coordinator, ApiServerOptions options)
    : impl_(std::make_unique<Impl>(coordinator, options)) {
  impl_->ConfigureServer();
  impl_->RegisterRoutes();
}

ApiServer::~ApiServer() { Stop(); }

Result<int> ApiServer::Start(const std::string& host, int port) {
  int bound = port;
  if (port == 0) {
    bound = impl_->server.bind_to_any_port(host);
    if (bound < 0) return Status::Unavailable("cannot bind " + host + " on any port");
  } else if (!impl_->server.bind_to_port(host, port)) {
    return Status::Unavailable("cannot bind " + host + ":" + std::to_string(port) +
                               " (in use, or not a local address)");
  }
  if (!impl_->server.WidenBacklog()) spdlog::warn("cannot enlarge the listen backlog");
  impl_->thread = std::thread([this] {
    impl_->server.listen_after_bind();
    impl_->listener_done = true;
  });
  // stop() ignores a server whose listener has not started yet; return only once it has, so
  // that Stop() right after Start() cannot hang.
  while (!impl_->server.is_running() && !impl_->listener_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

void ApiServer::Stop() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace settle::coordinator
