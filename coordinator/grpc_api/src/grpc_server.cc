#include "settle/grpc_api/grpc_server.h"

#include <grpc/support/time.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "dtmgimp.grpc.pb.h"
#include "settle/api/authentication.h"
#include "settle/api/rate_limiter.h"
#include "settle/api/requester.h"
#include "settle/core/ascii.h"
#include "settle/core/file_text.h"
#include "settle/core/log_rate_limiter.h"
#include "settle/core/log_text.h"
#include "settle/core/protocol.h"
#include "settle/core/trace_context.h"
#include "settle/core/url.h"
#include "settle/engine/request_fields.h"
#include "settle/grpc_api/grpc_status.h"
#include "settle/grpc_api/request_translator.h"
#include "settle/grpc_listen/server_limits.h"
#include "settle/net/certificate_subject.h"

namespace settle::grpc_api {
namespace {

using google::protobuf::Empty;

// The metadata that names the unknown members of a request (docs/protocol.md §1.5).
constexpr const char* kIgnoredFieldsKey = "settle-ignored-fields";
// What an "url" of the engine's is called in a topic request.
constexpr std::string_view kTopicUrl = "URL";

class DtmService;

// One method of dtmgimp.Dtm: the access it needs and what serves its request message.
struct Method {
  std::string_view name;  // as in the refusal log: "Submit"
  api::Access access;
  void (DtmService::*serve)(class DtmCall& call, const std::string& message);
};

// One call of the API, seen as soon as its headers arrive (a generic service's call, not
// gRPC's typed one, which is seen only once its whole request message has come): its token is
// judged before its message is read, and the message must come within the first-message
// deadline (grpc_listen::FirstMessageWatch), or the call is ended and its memory freed.
class DtmCall final : public grpc::ServerGenericBidiReactor {
 public:
  DtmCall(grpc::GenericCallbackServerContext* ctx, DtmService& service);
  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

  grpc::CallbackServerContext& context() { return *ctx_; }
  // Who made the call, as its token or certificate says (judged at its headers).
  const api::Caller& caller() const { return caller_; }
  // Ends the call: with `reply`'s bytes when `status` is OK.
  void Answer(const grpc::Status& status, const google::protobuf::MessageLite& reply) {
    if (!status.ok()) {
      Finish(status);
      return;
    }
    grpc::Slice bytes(reply.SerializeAsString());
    response_ = grpc::ByteBuffer(&bytes, 1);
    StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
  }

 private:
  grpc::GenericCallbackServerContext* const ctx_;
  DtmService& service_;
  const Method* method_ = nullptr;
  api::Caller caller_;
  grpc_listen::FirstMessageWatch::Waiting waiting_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

// The message's bytes parsed as a `Message`; INVALID_ARGUMENT naming it otherwise.
template <typename Message>
std::optional<grpc::Status> Parse(const std::string& bytes, Message& message) {
  if (message.ParseFromString(bytes)) return std::nullopt;
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      "request: not a " + message.GetTypeName() + " message");
}

class DtmService final : public grpc::CallbackGenericService {
 public:
  DtmService(drive::Coordinator& coordinator, asio::io_context& context,
             const api::AccessTokens& tokens, const api::ClientCertificates& certificates,
             api::RefusalLog* refusals, api::RateLimiter* rate_limiter,
             grpc_listen::FirstMessageWatch& watch)
      : coordinator_(coordinator),
        context_(context),
        authentication_(tokens, certificates),
        refusals_(refusals),
        rate_limiter_(rate_limiter),
        watch_(watch) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new DtmCall(ctx, *this);
  }

  grpc_listen::FirstMessageWatch& watch() { return watch_; }

  // The method `path` names ("/dtmgimp.Dtm/Submit"); null for one the API does not have.
  static const Method* Find(std::string_view path) {
    static constexpr std::string_view kPrefix = "/dtmgimp.Dtm/";
    static const Method kMethods[] = {
        {"NewGid", api::Access::kClient, &DtmService::NewGid},
        {"Prepare", api::Access::kClient, &DtmService::Prepare},
        {"Submit", api::Access::kClient, &DtmService::Submit},
        {"Abort", api::Access::kClient, &DtmService::Abort},
        {"RegisterBranch", api::Access::kClient, &DtmService::RegisterBranch},
        {"PrepareWorkflow", api::Access::kClient, &DtmService::PrepareWorkflow},
        {"Subscribe", api::Access::kClient, &DtmService::Subscribe},
        {"Unsubscribe", api::Access::kClient, &DtmService::Unsubscribe},
        {"DeleteTopic", api::Access::kAdmin, &DtmService::DeleteTopic},
    };
    if (!path.starts_with(kPrefix)) return nullptr;
    const std::string_view name = path.substr(kPrefix.size());
    for (const Method& method : kMethods) {
      if (method.name == name) return &method;
    }
    return nullptr;
  }

  void NewGid(DtmCall& call, const std::string& bytes) {
    Empty request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    dtmgimp::DtmGidReply reply;
    try {
      reply.set_gid(coordinator_.NewGid());
      call.Answer(grpc::Status::OK, reply);
    } catch (const std::exception& e) {
      call.Answer({grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what()}, reply);
    }
  }

  void Prepare(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    Serve(call, "Prepare", ToPrepare(request),
          [this](engine::PrepareRequest r) { return coordinator_.Prepare(std::move(r)); });
  }

  void Submit(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    Serve(call, "Submit", ToSubmit(request),
          [this](engine::SubmitRequest r) { return coordinator_.Submit(std::move(r)); });
  }

  void Abort(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    Serve(call, "Abort", ToAbort(request),
          [this](engine::AbortRequest r) { return coordinator_.Abort(std::move(r)); });
  }

  // Answered with settled's countersignature of the branch's Try, when it signs and the
  // registration named the Try (Data's "try"), as initial metadata: "settle-try-" and each
  // field's name (docs/protocol.md §10.2; DTM's reply is Empty).
  void RegisterBranch(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmBranchRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    grpc::CallbackServerContext* ctx = &call.context();
    Serve(call, "RegisterBranch", ToRegisterBranch(request),
          [this, ctx](engine::RegisterBranchRequest r) {
            return RegisterAndCountersign(ctx, std::move(r));
          });
  }

  void PrepareWorkflow(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    auto reply = std::make_shared<dtmgimp::DtmProgressesReply>();
    Serve(
        call, "PrepareWorkflow", ToPrepare(request),
        [this, reply](engine::PrepareRequest r) {
          return PrepareWorkflowInto(std::move(r), reply);
        },
        "Data.url", reply);
  }

  asio::awaitable<Status> PrepareWorkflowInto(engine::PrepareRequest request,
                                              std::shared_ptr<dtmgimp::DtmProgressesReply> reply) {
    auto stored = co_await coordinator_.PrepareWorkflow(std::move(request));
    if (!stored) co_return stored.status();
    ToProgressReply(*stored, *reply);
    co_return Status::Ok();
  }

  void Subscribe(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmTopicRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    Serve(
        call, "Subscribe", ToSubscription(request),
        [this](engine::SubscribeRequest r) { return coordinator_.Subscribe(std::move(r)); },
        kTopicUrl);
  }

  void Unsubscribe(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmTopicRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    Serve(
        call, "Unsubscribe", ToSubscription(request),
        [this](engine::SubscribeRequest r) { return coordinator_.Unsubscribe(std::move(r)); },
        kTopicUrl);
  }

  void DeleteTopic(DtmCall& call, const std::string& bytes) {
    dtmgimp::DtmTopicRequest request;
    if (auto bad = Parse(bytes, request)) return call.Answer(*bad, Empty());
    Serve(
        call, "DeleteTopic", ToDeleteTopic(request),
        [this](engine::DeleteTopicRequest r) { return coordinator_.DeleteTopic(std::move(r)); },
        kTopicUrl);
  }

  // RESOURCE_EXHAUSTED when the caller is over --rate-limit (the HTTP API's 429), then
  // UNAUTHENTICATED or PERMISSION_DENIED when the call's token, or else its client
  // certificate, does not grant `needed`, as the HTTP API's 401 and 403.
  // `caller`, when given, gets who was granted it.
  std::optional<grpc::Status> Authorize(const grpc::CallbackServerContext& ctx, api::Access needed,
                                        std::string_view method,
                                        api::Caller* caller = nullptr) const {
    const auto& metadata = ctx.client_metadata();
    const auto it = metadata.find("authorization");
    std::string authorization;
    if (it != metadata.end()) authorization.assign(it->second.data(), it->second.size());
    const std::string subject = PeerSubject(ctx);
    const api::Authentication::Identified identified =
        authentication_.Identify(it == metadata.end() ? nullptr : &authorization, subject);
    if (rate_limiter_ != nullptr && rate_limiter_->enabled()) {
      const std::string key =
          api::RateLimiter::KeyOf(authentication_, identified, PeerAddress(ctx.peer()));
      if (const std::optional<Duration> wait = rate_limiter_->Take(key, api::ApiPort::kGrpc)) {
        return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, rate_limiter_->Message(*wait));
      }
    }
    const std::optional<api::Authentication::Refusal> refusal = authentication_.Authorize(
        identified, needed, method, subject, "metadata authorization: Bearer <token>");
    if (!refusal) {
      if (caller != nullptr) *caller = identified.caller;
      return std::nullopt;
    }
    if (refusals_ != nullptr) {
      refusals_->Refused(api::ApiPort::kGrpc, PeerAddress(ctx.peer()), method, *refusal);
    }
    return grpc::Status(refusal->unauthenticated ? grpc::StatusCode::UNAUTHENTICATED
                                                 : grpc::StatusCode::PERMISSION_DENIED,
                        refusal->message);
  }

  // The IP address in gRPC's name of a peer ("ipv4:10.0.0.7:51234", "ipv6:[::1]:51234"), as
  // the HTTP API logs it; anything else as it is.
  static std::string PeerAddress(std::string_view peer) {
    for (std::string_view scheme : {"ipv4:", "ipv6:"}) {
      if (!peer.starts_with(scheme)) continue;
      std::string_view address = peer.substr(scheme.size());
      const std::size_t colon = address.rfind(':');
      if (colon != std::string_view::npos) address = address.substr(0, colon);
      if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
        address = address.substr(1, address.size() - 2);
      }
      return std::string(address);
    }
    return std::string(peer);
  }

  // The subject of the client certificate the TLS handshake verified (--tls-client-ca),
  // rendered as the HTTP server renders it; empty without one. The server verifies every
  // certificate presented (GRPC_SSL_REQUEST_..._AND_VERIFY), so the PEM is read whether or not
  // gRPC calls the peer authenticated: it does not for a certificate without a CN or SAN.
  static std::string PeerSubject(const grpc::CallbackServerContext& ctx) {
    const std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
    if (auth == nullptr) return "";
    const std::vector<grpc::string_ref> pem =
        auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
    if (pem.empty()) return "";
    Result<std::string> subject =
        net::CertificateSubjectFromPem(std::string_view(pem.front().data(), pem.front().size()));
    return subject ? *subject : "";
  }

  static std::optional<TraceContext> TraceOf(const grpc::CallbackServerContext& ctx) {
    std::vector<HeaderField> metadata;
    for (const auto& [key, value] : ctx.client_metadata()) {
      metadata.emplace_back(std::string_view(key.data(), key.size()),
                            std::string_view(value.data(), value.size()));
    }
    return ReadTraceHeaders(metadata);
  }

  // Runs `operation` on the translated request as a coroutine on the I/O threads, which
  // finishes the call with its Status.
  template <typename Request, typename Operation>
  void Serve(DtmCall& call, std::string_view method, Result<Request> translated,
             Operation operation, std::string_view url_name = "Data.url",
             std::shared_ptr<const google::protobuf::MessageLite> reply = nullptr) {
    // Who asks, for the coordinator's ownership rules and quotas (engine/ownership.h).
    if constexpr (requires { translated->requester; }) {
      if (translated) {
        translated->requester = api::RequesterOf(call.caller(), authentication_.enabled());
      }
    }
    // The caller's span, from its traceparent and tracestate metadata.
    if constexpr (requires { translated->trace; }) {
      if (translated) translated->trace = TraceOf(call.context());
    }
    if (!translated) return call.Answer(ToGrpcStatus(translated.status(), url_name), Empty());
    const std::vector<std::string> unknown = engine::UnknownFields(translated->unread_fields);
    if (!unknown.empty()) {
      call.context().AddInitialMetadata(kIgnoredFieldsKey, engine::ListOfFields(unknown));
    }
    DtmCall* answered = &call;
    asio::co_spawn(
        context_, operation(std::move(*translated)),
        [answered, url_name, method, reply](std::exception_ptr failure, Status status) {
          if (failure) {
            std::string what = "unknown exception";
            try {
              std::rethrow_exception(failure);
            } catch (const std::exception& e) {
              what = e.what();
            } catch (...) {
            }
            spdlog::critical("gRPC {} failed with an exception (a bug): {}", method,
                             LogValue(what));
            answered->Answer({grpc::StatusCode::INTERNAL, "internal error: " + what}, Empty());
            return;
          }
          if (reply != nullptr) return answered->Answer(ToGrpcStatus(status, url_name), *reply);
          answered->Answer(ToGrpcStatus(status, url_name), Empty());
        });
  }

 private:
  // The registration, then its countersignature's fields added to the answer's metadata
  // (before Serve finishes the call).
  asio::awaitable<Status> RegisterAndCountersign(grpc::CallbackServerContext* ctx,
                                                 engine::RegisterBranchRequest request) {
    Result<drive::Registration> registered = co_await coordinator_.Register(std::move(request));
    if (!registered) co_return registered.status();
    // gRPC metadata keys are lowercase: an HTTP Try's fields (Content-Digest, ...) too, or
    // gRPC would refuse the answer's metadata (and abort the process).
    for (const auto& [name, value] : registered->try_signature) {
      ctx->AddInitialMetadata(std::string(kTrySignatureMetadataPrefix) + AsciiLowercase(name),
                              value);
    }
    co_return Status::Ok();
  }

  drive::Coordinator& coordinator_;
  asio::io_context& context_;
  const api::Authentication authentication_;
  api::RefusalLog* const refusals_;       // null: refusals are not logged
  api::RateLimiter* const rate_limiter_;  // null: no limit
  grpc_listen::FirstMessageWatch& watch_;
};

DtmCall::DtmCall(grpc::GenericCallbackServerContext* ctx, DtmService& service)
    : ctx_(ctx), service_(service), method_(DtmService::Find(ctx->method())) {
  if (method_ == nullptr) {
    Finish({grpc::StatusCode::UNIMPLEMENTED, "no method " + ctx->method() + " in dtmgimp.Dtm"});
    return;
  }
  // The token before the message: a refused call's message is never read.
  if (auto refused = service_.Authorize(*ctx, method_->access, method_->name, &caller_)) {
    Finish(*refused);
    return;
  }
  grpc_listen::FirstMessageWatch& watch = service_.watch();
  waiting_.expire = [this, &watch] {
    Finish(
        {grpc::StatusCode::DEADLINE_EXCEEDED, watch.ExpiryMessage("--grpc-first-message-timeout")});
  };
  if (const auto refused = watch.Arm(waiting_, ctx->peer());
      refused != grpc_listen::FirstMessageWatch::Refusal::kNone) {
    Finish({grpc::StatusCode::RESOURCE_EXHAUSTED,
            watch.RefusalMessage(refused, "--grpc-memory-limit")});
    return;
  }
  StartRead(&request_);
}

void DtmCall::OnReadDone(bool ok) {
  // Too late: the deadline has ended the call.
  if (!service_.watch().Disarm(waiting_)) return;
  if (!ok) {
    Finish({grpc::StatusCode::INVALID_ARGUMENT, "no request message"});
    return;
  }
  std::string bytes;
  std::vector<grpc::Slice> slices;
  if (request_.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  request_.Clear();
  (service_.*(method_->serve))(*this, bytes);
}

}  // namespace

// One warning per refused gRPC connection, at most 10 a minute per cap (then how many more).
class ConnectionRefusalLog {
 public:
  ConnectionRefusalLog(std::size_t max_connections, std::size_t max_per_peer)
      : max_connections_(max_connections), max_per_peer_(max_per_peer) {}

  void Refused(const std::string& peer, bool per_peer) {
    std::lock_guard lock(mutex_);
    const LogRateLimiter::Verdict verdict = limiter_.Admit(per_peer ? 1 : 0);
    const char* flag = per_peer ? "--grpc-max-connections-per-peer" : "--grpc-max-connections";
    if (verdict.suppressed > 0) {
      spdlog::warn("gRPC API: {} more connections refused at {} were not logged",
                   verdict.suppressed, flag);
    }
    if (!verdict.log) return;
    spdlog::warn("gRPC API refused a connection from {}: {} connections open{} ({}){}", peer,
                 per_peer ? max_per_peer_ : max_connections_, per_peer ? " from that address" : "",
                 flag,
                 verdict.last ? "; more this minute are only counted "
                                "(settle_grpc_connections_refused_total)"
                              : "");
  }

 private:
  const std::size_t max_connections_;
  const std::size_t max_per_peer_;
  SystemClock clock_;
  std::mutex mutex_;
  LogRateLimiter limiter_{clock_, 2, {.lines = 10, .window = Duration(60'000)}};
};

struct GrpcServer::Impl {
  GrpcServerOptions options;
  std::unique_ptr<ConnectionRefusalLog> refusal_log;
  std::unique_ptr<grpc_listen::ConnectionGate> gate;
  std::unique_ptr<grpc_listen::FirstMessageWatch> watch;
  std::unique_ptr<DtmService> service;
  std::unique_ptr<grpc::Server> server;
  bool stopped = false;
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Stop(Duration(0)); }

int GrpcServer::port() const { return impl_->gate->port(); }

GrpcServerCounts GrpcServer::counts() const {
  const grpc_listen::ConnectionCounts connections = impl_->gate->counts();
  return {.connections = connections,
          .waiting_calls = impl_->watch->waiting(),
          .first_message_timeouts = impl_->watch->expired(),
          .waiting_refusals = impl_->watch->refused()};
}

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(drive::Coordinator& coordinator,
                                                      asio::io_context& context,
                                                      GrpcServerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const GrpcServerOptions& o = impl->options;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (o.tls.enabled()) {
    auto cert = ReadFileText(o.tls.cert_file);
    if (!cert) return cert.status();
    auto key = ReadFileText(o.tls.key_file);
    if (!key) return key.status();
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({*key, *cert});
    if (!o.tls.client_ca_file.empty()) {
      // Mutual TLS: a client certificate is verified against these CAs at the handshake (one
      // from another CA, or expired, ends the connection there), and required when asked.
      auto client_ca = ReadFileText(o.tls.client_ca_file);
      if (!client_ca) return client_ca.status();
      tls.pem_root_certs = *client_ca;
      tls.client_certificate_request =
          o.tls.require_client_certificate
              ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
              : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    credentials = grpc::SslServerCredentials(tls);
  }
  auto gate =
      grpc_listen::ConnectionGate::Listen(o.host, o.port,
                                          {.max_connections = o.max_connections,
                                           .max_connections_per_peer = o.max_connections_per_peer});
  if (!gate) {
    if (gate.status().code() != StatusCode::kUnavailable) return gate.status();
    return Status::Unavailable(
        "cannot serve gRPC on " + JoinHostPort(o.host, o.port) +
        " (taken, or not an address of this host): " + gate.status().message());
  }
  impl->gate = std::move(*gate);
  impl->refusal_log =
      std::make_unique<ConnectionRefusalLog>(o.max_connections, o.max_connections_per_peer);
  impl->gate->ObserveRefusals(
      [log = impl->refusal_log.get()](const std::string& peer, bool per_peer) {
        log->Refused(peer, per_peer);
      });
  impl->watch = std::make_unique<grpc_listen::FirstMessageWatch>(
      o.first_message_timeout, grpc_listen::WaitingStreamBudget(o.memory_limit_bytes));
  impl->service = std::make_unique<DtmService>(
      coordinator, context, impl->options.tokens, impl->options.client_certificates,
      impl->options.refusals, impl->options.rate_limiter, *impl->watch);
  grpc::ServerBuilder builder;
  impl->gate->AttachTo(builder, credentials);
  builder.RegisterCallbackGenericService(impl->service.get());
  grpc_listen::ApplyServerLimits(builder, {.max_message_bytes = o.max_message_bytes,
                                           .idle_timeout = o.idle_timeout,
                                           .handshake_timeout = o.first_message_timeout,
                                           .max_streams_per_connection = o.max_calls_per_connection,
                                           .memory_quota_bytes = o.memory_limit_bytes});
  impl->server = builder.BuildAndStart();
  if (!impl->server) {
    return Status::Unavailable("cannot serve gRPC on " + JoinHostPort(o.host, o.port));
  }
  impl->gate->Start();
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

void GrpcServer::Stop(Duration grace) {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  // No new connection is handed to a server that is shutting down.
  impl_->gate->Stop();
  // A deadline on gRPC's own monotonic clock, which its timers run on.
  const gpr_timespec deadline =
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(grace.count(), GPR_TIMESPAN));
  impl_->server->Shutdown(deadline);
  impl_->server->Wait();
  impl_->watch->Stop();
}

}  // namespace settle::grpc_api
