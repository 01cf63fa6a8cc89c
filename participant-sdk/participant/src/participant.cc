#include "settle/sdk/participant.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "settle/async/await.h"
#include "settle/async/io_threads.h"
#include "settle/core/http_status.h"
#include "settle/core/url.h"
#include "settle/net/descriptor_budget.h"
#include "settle/net/route_table.h"
#include "settle/net/server.h"
#include "settle/sdk/call_trace.h"
#include "settle/sdk/caught.h"
#include "settle/sdk/msg_barrier.h"
#include "settle/sdk/served_authorities.h"
#include "settle/signing/refusal_kind.h"

namespace settle::sdk {
namespace {

constexpr const char* kJson = "application/json";

std::string Json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The protocol's answer for a handler's reply (docs/protocol.md §6.2): the one Status mapping
// of §1.2, with the handler's own body for a success. The coordinator reads it as §4.2 says.
void WriteReply(const BranchReply& reply, net::Response& res) {
  HttpAnswer answer = ToHttpAnswer(reply.status);
  res.status = answer.status;
  res.content_type = kJson;
  res.body = reply.status.ok() && !reply.body.empty() ? reply.body : std::move(answer.body);
}

// Whether the query repeats a protocol key, answered then with 400 (docs/protocol.md §6.1):
// before the signature, the barrier or a handler; retried by the coordinator, never a FAILURE.
bool RefusedRepeat(const net::Request& req, net::Response& res) {
  const Status once = CheckProtocolKeysOnce(req.params);
  if (once.ok()) return false;
  WriteReply(BranchReply::Error(once), res);
  return true;
}

// Runs on the handler pool: it may block.
using Route = std::function<void(const net::Request&, net::Response&)>;

// The connection caps a participant serves with: its options' fitted to the process's
// descriptors (net::FitConnections, after raising the soft limit to the hard one), and what
// Start says of it when they were lowered.
struct FittedCaps {
  std::size_t max_connections = 0;
  std::size_t max_connections_per_peer = 0;
  std::string lowered;  // empty: kept as given
};

FittedCaps FitCaps(const ParticipantOptions& o) {
  FittedCaps caps{o.max_connections, o.max_connections_per_peer, ""};
  const Result<net::DescriptorBudget> budget = net::FitConnections(
      net::RaiseDescriptorLimit(), {.flag = "max_connections", .value = o.max_connections}, {});
  if (!budget) {
    // Not a descriptor left for a connection (a limit of 64 or less): served as asked, and
    // said.
    caps.lowered = budget.status().message();
    return caps;
  }
  if (budget->lowered.empty()) return caps;
  caps.max_connections = budget->first;
  caps.lowered = budget->lowered.front();
  if (caps.max_connections_per_peer > caps.max_connections) {
    caps.max_connections_per_peer = caps.max_connections;
    caps.lowered += "; max_connections_per_peer lowered with it";
  }
  return caps;
}

}  // namespace

struct Participant::Impl {
  explicit Impl(ParticipantOptions o)
      : options(o),
        caps(FitCaps(o)),
        io(o.io_threads, "participant-io"),
        pool(std::max<std::size_t>(1, o.threads)),
        server(io.context(),
               net::ServerOptions{
                   .limits = {.max_body_bytes = o.max_body_bytes},
                   .keep_alive_timeout = std::chrono::duration_cast<Duration>(o.keep_alive_timeout),
                   .request_timeout = std::chrono::duration_cast<Duration>(o.request_timeout),
                   .max_requests_per_connection = o.max_requests_per_connection,
                   .max_connections = caps.max_connections,
                   .max_connections_per_peer = caps.max_connections_per_peer,
                   .tls = {.cert_file = o.tls_cert_file,
                           .key_file = o.tls_key_file,
                           .client_ca_file = o.tls_client_ca_file,
                           .require_client_certificate = !o.tls_client_ca_file.empty()},
                   .judge_head = [this](const net::Request& head) -> net::HeadVerdict {
                     // An unknown path or method is refused before its body is read.
                     std::string allow;
                     if (FindRoute(head, allow) != nullptr) return std::nullopt;
                     return net::NoRoute(head, allow);
                   },
                   .refusal =
                       [this](int status, const std::string& problem) {
                         // Counted for bound_counts (a count orders nothing: relaxed).
                         if (status == 408) timed_out.fetch_add(1, std::memory_order_relaxed);
                         if (status == 503) refused.fetch_add(1, std::memory_order_relaxed);
                         // docs/protocol.md §7.1: a refused request gets {"message"} naming what.
                         return net::Response{status, kJson, Json({{"message", problem}})};
                       }},
               [this](net::Request& req) { return Serve(req); }) {}

  // The route of `req`'s method and path, exact ones first, then patterns in the order they
  // were added; null with `allow` the path's methods (empty: an unknown path).
  const Route* FindRoute(const net::Request& req, std::string& allow) const {
    auto exact = routes.Find(req.method, req.path);
    allow = exact.allow;
    if (exact.route != nullptr) return exact.route;
    for (const auto& [method, pattern, candidate] : pattern_routes) {
      if (!std::regex_match(req.path, pattern)) continue;
      if (method == req.method) return &candidate;
      if (allow.find(method) == std::string::npos) allow += allow.empty() ? method : ", " + method;
    }
    return nullptr;
  }

  asio::awaitable<net::Response> Serve(net::Request& req) {
    std::string allow;
    const Route* route = FindRoute(req, allow);
    if (route == nullptr) co_return net::NoRoute(req, allow);
    // The business code may block (its own database): it runs on the pool, not here.
    co_return co_await async::Offload(pool, [route, &req] {
      net::Response res;
      (*route)(req, res);
      return res;
    });
  }

  // Whether `req` may run a handler: signed as options.signed_calls asks, or no policy.
  // `kind`: who makes the call (CallKind), as the route and the query the handler will be given
  // say: a Try on a route that serves Trys (OnTry, OnBranch), an action on an XA route (OnXa),
  // a workflow's step call on a branch route. The route decides as much as the query, so that
  // no caller picks its policy by what it claims (GrpcBranchServer follows the same rule). A
  // refusal is answered here: 401, a reason that is no verdict (the coordinator retries it, and
  // never reads it as FAILURE), counted and logged once with the caller's address and what the
  // call named.
  bool Admit(const net::Request& req, net::Response& res, CallKind kind) const {
    if (!options.signed_calls) return true;
    const std::string* host = req.Header("Host");
    const std::shared_ptr<const std::vector<std::string>> names = authorities.load();
    const ArrivedCall call{.method = req.method,
                           .host = host != nullptr ? *host : std::string(),
                           .target = req.target,
                           .body = req.body,
                           .fields = &req.headers,
                           .kind = kind,
                           .authorities = names.get()};
    const std::int64_t now = ToUnixMillis(clock->Now()) / 1000;
    const signing::Verdict checked = CheckSignedCall(*options.signed_calls, call, now);
    if (checked.ok()) return true;
    refusals.Count(checked.kind());
    const auto param = [&req](const char* name) -> std::string_view {
      const auto it = req.params.find(name);
      return it == req.params.end() ? std::string_view() : std::string_view(it->second);
    };
    const std::string what = req.method + " " + req.path;
    const std::string peer = JoinHostPort(req.remote_address, req.remote_port);
    const std::string line = RefusalLogLine(RefusedCall{.server = "settle participant",
                                                        .call = what,
                                                        .peer = peer,
                                                        .gid = param("gid"),
                                                        .branch_id = param("branch_id"),
                                                        .op = param("op")},
                                            checked);
    std::fprintf(stderr, "%s\n", line.c_str());
    res.status = 401;
    res.content_type = kJson;
    res.body = Json({{"message", "signature: " + checked.message()}});
    return false;
  }

  void ServeBranch(const net::Request& req, net::Response& res, std::optional<BranchOp> only_op,
                   const BranchHandler& handler) const {
    if (RefusedRepeat(req, res)) return;
    BranchRequest request;
    request.path = req.path;
    request.body = req.body;
    for (const auto& [name, value] : req.headers) request.headers.emplace(name, value);
    request.trace = ReadCallTrace(request.headers);
    Status parsed = ParseBranchQuery(req.params, request);
    // Checked on the query as parsed, so that the op the handler sees is the op judged here.
    if (!Admit(req, res,
               parsed.ok() ? BranchCallKind(only_op, request) : CallKind::kCoordinators)) {
      return;
    }
    if (parsed.ok() && only_op && request.op != *only_op) {
      parsed = Status::InvalidArgument("op: this URL takes op=" + std::string(ToString(*only_op)));
    }
    if (!parsed.ok()) {
      // Refused as FAILURE, not 400: a request that cannot be read will not become readable,
      // and the coordinator retries a 400 forever (docs/protocol.md §4.2, §6.2).
      WriteReply(BranchReply::Failure(parsed.message()), res);
      return;
    }
    WriteReply(CaughtReply("handler", [&] { return handler(request); }), res);
  }

  void ServeXa(const net::Request& req, net::Response& res, const XaHandler& handler) const {
    if (RefusedRepeat(req, res)) return;
    XaRequest request;
    request.path = req.path;
    request.body = req.body;
    for (const auto& [name, value] : req.headers) request.headers.emplace(name, value);
    request.trace = ReadCallTrace(request.headers);
    const Status parsed = ParseXaQuery(req.params, request);
    if (!Admit(req, res,
               parsed.ok() && request.op == XaOp::kAction ? CallKind::kXaAction
                                                          : CallKind::kCoordinators)) {
      return;
    }
    if (!parsed.ok()) {
      // FAILURE, as for a branch URL: an action that cannot be read aborts its transaction.
      WriteReply(BranchReply::Failure(parsed.message()), res);
      return;
    }
    WriteReply(CaughtReply("handler", [&] { return handler(request); }), res);
  }

  void ServeResume(const net::Request& req, net::Response& res,
                   const ResumeHandler& handler) const {
    if (RefusedRepeat(req, res)) return;
    // settled's call: an unsigned one would run (and end) a workflow of the caller's choosing.
    if (!Admit(req, res, CallKind::kCoordinators)) return;
    ResumeRequest request;
    request.path = req.path;
    request.input = req.body;
    for (const auto& [name, value] : req.headers) request.headers.emplace(name, value);
    request.trace = ReadCallTrace(request.headers);
    if (Status parsed = ParseResumeQuery(req.params, request); !parsed.ok()) {
      WriteReply(BranchReply::Failure(parsed.message()), res);
      return;
    }
    WriteReply(CaughtReply("handler", [&] { return handler(request); }), res);
  }

  ParticipantOptions options;
  const FittedCaps caps;
  // The server's refusals at the bounds: 408 (request_timeout, a stall) and 503 (the caps).
  std::atomic<std::uint64_t> timed_out{0};
  std::atomic<std::uint64_t> refused{0};
  SystemClock default_clock;
  const Clock* clock = options.clock != nullptr ? options.clock : &default_clock;
  mutable SignatureRefusalCounter refusals;
  async::IoThreads io;
  asio::thread_pool pool;
  // Filled before Start, read-only while serving. Branch routes by method and path; the
  // participant's own routes by regular expression, in the order they were added.
  net::RouteTable<Route> routes;
  std::vector<std::tuple<std::string, std::regex, Route>> pattern_routes;
  net::Server server;
  // The names signed calls must be made for, once Start knows them (null before: a call
  // that arrives then is refused, as signed for no name this participant answers to).
  std::atomic<std::shared_ptr<const std::vector<std::string>>> authorities;
  bool started = false;
};

Participant::Participant(ParticipantOptions options) : impl_(std::make_unique<Impl>(options)) {}

Participant::~Participant() { Stop(); }

std::uint64_t Participant::signature_refusals() const { return impl_->refusals.Snapshot().total(); }

SignatureRefusalCounts Participant::signature_refusal_counts() const {
  return impl_->refusals.Snapshot();
}

ParticipantCounts Participant::bound_counts() const {
  return {.open_connections = impl_->server.connections(),
          .max_connections = impl_->caps.max_connections,
          .refused_connections = impl_->refused.load(std::memory_order_relaxed),
          .timed_out_requests = impl_->timed_out.load(std::memory_order_relaxed)};
}

Participant& Participant::OnOp(const std::string& path, std::optional<BranchOp> op,
                               BranchHandler handler) {
  auto serve = [impl = impl_.get(), op, handler = std::move(handler)](const net::Request& req,
                                                                      net::Response& res) {
    impl->ServeBranch(req, res, op, handler);
  };
  impl_->routes.Add("GET", path, serve);
  impl_->routes.Add("POST", path, serve);
  return *this;
}

Participant& Participant::OnXa(const std::string& path, XaHandler handler) {
  auto serve = [impl = impl_.get(), handler = std::move(handler)](const net::Request& req,
                                                                  net::Response& res) {
    impl->ServeXa(req, res, handler);
  };
  impl_->routes.Add("GET", path, serve);
  impl_->routes.Add("POST", path, serve);
  return *this;
}

Participant& Participant::OnResume(const std::string& path, ResumeHandler handler) {
  auto serve = [impl = impl_.get(), handler = std::move(handler)](const net::Request& req,
                                                                  net::Response& res) {
    impl->ServeResume(req, res, handler);
  };
  impl_->routes.Add("GET", path, serve);
  impl_->routes.Add("POST", path, serve);
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

Participant& Participant::OnQueryPrepared(const std::string& path, Barrier& barrier) {
  BranchHandler answer = [&barrier](const BranchRequest& request) {
    return QueryPrepared(barrier, request.gid);
  };
  auto serve = [impl = impl_.get(), answer = std::move(answer)](const net::Request& req,
                                                                net::Response& res) {
    if (RefusedRepeat(req, res)) return;
    // settled's call like a phase 2: an unsigned back-check would write the barrier's
    // "rollback" row, and the message's local transaction could then never commit.
    if (!impl->Admit(req, res, CallKind::kCoordinators)) return;
    // The coordinator also sends trans_type=msg, branch_id=00 and op=msg, fixed values: the
    // gid alone says which message is meant.
    BranchRequest request;
    request.path = req.path;
    if (auto gid = req.params.find("gid"); gid != req.params.end()) request.gid = gid->second;
    if (request.gid.empty()) {
      WriteReply(BranchReply::Failure("gid: required in the query string"), res);
      return;
    }
    WriteReply(CaughtReply("handler", [&] { return answer(request); }), res);
  };
  impl_->routes.Add("GET", path, serve);
  impl_->routes.Add("POST", path, serve);
  return *this;
}

namespace {

Route ToRoute(RouteHandler handler) {
  return [handler = std::move(handler)](const net::Request& req, net::Response& res) {
    HttpRequest request{req.method, req.path, req.params, req.body, req.headers};
    // One that throws answers Internal, 500, as a branch handler does.
    HttpReply reply = Caught(
        "handler", [&] { return handler(request); },
        [](Status threw) {
          HttpAnswer answer = ToHttpAnswer(threw);
          return HttpReply{answer.status, std::move(answer.body)};
        });
    res.status = reply.status;
    res.body = std::move(reply.body);
    res.content_type = std::move(reply.content_type);
    res.headers = std::move(reply.headers);
  };
}

}  // namespace

const std::string* HttpRequest::Header(std::string_view name) const {
  return net::FindHeader(headers, name);
}

Participant& Participant::OnGet(const std::string& pattern, RouteHandler handler) {
  impl_->pattern_routes.emplace_back("GET", std::regex(pattern), ToRoute(std::move(handler)));
  return *this;
}

Participant& Participant::OnPost(const std::string& pattern, RouteHandler handler) {
  impl_->pattern_routes.emplace_back("POST", std::regex(pattern), ToRoute(std::move(handler)));
  return *this;
}

Result<int> Participant::Start(const std::string& host, int port) {
  const ParticipantOptions& o = impl_->options;
  if (!impl_->caps.lowered.empty()) {
    std::fprintf(stderr, "settle participant: %s\n", impl_->caps.lowered.c_str());
  }
  if (o.signed_calls) {
    std::fprintf(stderr, "settle participant: verifying signed calls with %s\n",
                 DescribeTrustedKeys(*o.signed_calls).c_str());
  }
  const bool needs_names = o.signed_calls && o.signed_calls->check_authority;
  // Refused before listening: a participant on every address must be told its names.
  if (needs_names && o.authorities.empty() && IsWildcardHost(host)) {
    return ServedAuthorities({}, host, port, "authorities").status();
  }
  if (needs_names && !o.authorities.empty()) {
    Result<std::vector<std::string>> names =
        ServedAuthorities(o.authorities, host, port, "authorities");
    if (!names) return names.status();
    impl_->authorities.store(std::make_shared<const std::vector<std::string>>(std::move(*names)));
  }
  impl_->io.Start();
  Result<int> bound = impl_->server.Start(host, port);
  if (bound && needs_names && o.authorities.empty()) {
    impl_->authorities.store(std::make_shared<const std::vector<std::string>>(
        *ServedAuthorities({}, host, *bound, "authorities")));
  }
  return bound;
}

std::vector<std::string> Participant::authorities() const {
  const std::shared_ptr<const std::vector<std::string>> names = impl_->authorities.load();
  return names != nullptr ? *names : std::vector<std::string>();
}

void Participant::Stop() {
  impl_->server.Stop();
  impl_->pool.join();
  impl_->io.Stop();
}

BranchHandler Guarded(Barrier& barrier, GuardedBusiness business) {
  return [&barrier, business = std::move(business)](const BranchRequest& request) {
    return barrier.Call(request, [&](BarrierTransaction& tx) { return business(request, tx); })
        .reply;
  };
}

}  // namespace settle::sdk
