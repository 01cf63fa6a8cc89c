#include "settle/sdk/participant.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

namespace settle::sdk {
namespace {

constexpr const char* kJson = "application/json";

// httplib listens with a backlog of 5: a burst of new connections from the coordinator
// overflows it, and each dropped SYN costs a one-second retransmit. Linux enlarges the queue
// of a listening socket when listen() is called on it again.
class Server final : public httplib::Server {
 public:
  bool WidenBacklog() { return ::listen(svr_sock_, SOMAXCONN) == 0; }
};

std::string Json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The protocol's answer for a handler's reply (protocol.md §4 classification).
void WriteReply(const BranchReply& reply, httplib::Response& res) {
  const Status& s = reply.status;
  switch (s.code()) {
    case StatusCode::kOk:
      res.status = 200;
      res.set_content(reply.body.empty() ? R"({"dtm_result":"SUCCESS"})" : reply.body, kJson);
      return;
    case StatusCode::kConflict:
      res.status = 409;
      res.set_content(Json({{"dtm_result", "FAILURE"}, {"message", s.message()}}), kJson);
      return;
    case StatusCode::kPending:
      res.status = 425;
      res.set_content(Json({{"dtm_result", "ONGOING"}, {"message", s.message()}}), kJson);
      return;
    case StatusCode::kInvalidArgument:
      res.status = 400;
      break;
    default:
      res.status = 500;
      break;
  }
  res.set_content(Json({{"message", s.message()}}), kJson);
}

BranchReply RunHandler(const BranchHandler& handler, const BranchRequest& request) {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    return BranchReply::Error(Status::Internal(std::string("handler threw: ") + e.what()));
  } catch (...) {
    return BranchReply::Error(Status::Internal("handler threw"));
  }
}

}  // namespace

struct Participant::Impl {
  explicit Impl(ParticipantOptions o) : options(o) {}

  void ServeBranch(const httplib::Request& req, httplib::Response& res,
                   std::optional<BranchOp> only_op, const BranchHandler& handler) {
    BranchRequest request;
    request.path = req.path;
    request.body = req.body;
    for (const auto& [name, value] : req.headers) request.headers.emplace(name, value);
    Status parsed = ParseBranchQuery(req.params, request);
    if (parsed.ok() && only_op && request.op != *only_op) {
      parsed = Status::InvalidArgument("op: this URL takes op=" + std::string(ToString(*only_op)));
    }
    if (!parsed.ok()) {
      WriteReply(BranchReply::Error(parsed), res);
      return;
    }
    WriteReply(RunHandler(handler, request), res);
  }

  ParticipantOptions options;
  Server server;
  std::thread thread;
  std::atomic<bool> listener_done{false};
};

Participant::Participant(ParticipantOptions options) : impl_(std::make_unique<Impl>(options)) {
  httplib::Server& server = impl_->server;
  const std::size_t threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(1'000'000);
  server.set_keep_alive_timeout(std::max<time_t>(1, options.keep_alive_timeout.count()));
  server.set_payload_max_length(options.max_body_bytes);
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == 413) res.status = 400;
        res.set_content(Json({{"message", res.status == 404 ? "no route for " + req.path
                                                            : std::string("bad request")}}),
                        kJson);
        return httplib::Server::HandlerResponse::Handled;
      }));
}

Participant::~Participant() { Stop(); }

Participant& Participant::OnOp(const std::string& path, std::optional<BranchOp> op,
                               BranchHandler handler) {
  auto serve = [impl = impl_.get(), op, handler = std::move(handler)](const httplib::Request& req,
                                                                      httplib::Response& res) {
    impl->ServeBranch(req, res, op, handler);
  };
  impl_->server.Get(path, serve);
  impl_->server.Post(path, serve);
  return *this;
}

Participant& Participant::OnBranch(const std::string& path, BranchHandler handler) {
  return OnOp(path, std::nullopt, std::move(handler));
}
Participant& Participant::OnTry(const std::string& path, BranchHandler handler) {
  return OnOp(path, BranchOp::kTry, std::move(handler));
}
Participant& Participant::OnConfirm(const std::string& path, BranchHandler handler) {
  return OnOp(path, BranchOp::kConfirm, std::move(handler));
}
Participant& Participant::OnCancel(const std::string& path, BranchHandler handler) {
  return OnOp(path, BranchOp::kCancel, std::move(handler));
}
Participant& Participant::OnAction(const std::string& path, BranchHandler handler) {
  return OnOp(path, BranchOp::kAction, std::move(handler));
}
Participant& Participant::OnCompensate(const std::string& path, BranchHandler handler) {
  return OnOp(path, BranchOp::kCompensate, std::move(handler));
}

namespace {

httplib::Server::Handler ToHttplib(RouteHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    HttpRequest request{req.method, req.path, {}, req.body};
    for (const auto& [name, value] : req.params) request.params.emplace(name, value);
    HttpReply reply;
    try {
      reply = handler(request);
    } catch (const std::exception& e) {
      reply = {500, Json({{"message", std::string("handler threw: ") + e.what()}})};
    } catch (...) {
      reply = {500, Json({{"message", "handler threw"}})};
    }
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type.c_str());
  };
}

}  // namespace

Participant& Participant::OnGet(const std::string& pattern, RouteHandler handler) {
  impl_->server.Get(pattern, ToHttplib(std::move(handler)));
  return *this;
}

Participant& Participant::OnPost(const std::string& pattern, RouteHandler handler) {
  impl_->server.Post(pattern, ToHttplib(std::move(handler)));
  return *this;
}

Result<int> Participant::Start(const std::string& host, int port) {
  int bound = port;
  if (port == 0) {
    bound = impl_->server.bind_to_any_port(host);
    if (bound < 0) return Status::Unavailable("cannot bind " + host + " on any port");
  } else if (!impl_->server.bind_to_port(host, port)) {
    return Status::Unavailable("cannot bind " + host + ":" + std::to_string(port));
  }
  impl_->server.WidenBacklog();  // best effort: a small queue only slows bursts down
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->listener_done = true;
  });
  // stop() ignores a server whose listener has not started yet; return only once it has, so
  // that Stop() right after Start() cannot hang.
  while (!impl_->server.is_running() && !impl_->listener_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

void Participant::Stop() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

BranchHandler Guarded(Barrier& barrier, GuardedBusiness business) {
  return [&barrier, business = std::move(business)](const BranchRequest& request) {
    return barrier.Call(request, [&](BarrierTransaction& tx) { return business(request, tx); })
        .reply;
  };
}

}  // namespace settle::sdk
