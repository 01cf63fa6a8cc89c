#include "settle/grpc_api/grpc_server.h"

#include <grpc/support/time.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cstdint>
#include <limits>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "dtmgimp.grpc.pb.h"
#include "settle/api/authentication.h"
#include "settle/api/requester.h"
#include "settle/core/ascii.h"
#include "settle/core/file_text.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"
#include "settle/engine/request_fields.h"
#include "settle/grpc_api/grpc_status.h"
#include "settle/grpc_api/request_translator.h"
#include "settle/net/certificate_subject.h"

namespace settle::grpc_api {
namespace {

using google::protobuf::Empty;

// The metadata that names the unknown members of a request (docs/protocol.md §1.5).
constexpr const char* kIgnoredFieldsKey = "settle-ignored-fields";
// What an "url" of the engine's is called in a topic request.
constexpr std::string_view kTopicUrl = "URL";

class DtmService final : public dtmgimp::Dtm::CallbackService {
 public:
  DtmService(drive::Coordinator& coordinator, asio::io_context& context,
             const api::AccessTokens& tokens, const api::ClientCertificates& certificates,
             api::RefusalLog* refusals)
      : coordinator_(coordinator),
        context_(context),
        authentication_(tokens, certificates),
        refusals_(refusals) {}

  grpc::ServerUnaryReactor* NewGid(grpc::CallbackServerContext* ctx, const Empty*,
                                   dtmgimp::DtmGidReply* reply) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    if (auto refused = Authorize(*ctx, api::Access::kClient, "NewGid")) {
      reactor->Finish(*refused);
      return reactor;
    }
    try {
      reply->set_gid(coordinator_.NewGid());
      reactor->Finish(grpc::Status::OK);
    } catch (const std::exception& e) {
      reactor->Finish({grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what()});
    }
    return reactor;
  }

  grpc::ServerUnaryReactor* Prepare(grpc::CallbackServerContext* ctx,
                                    const dtmgimp::DtmRequest* request, Empty*) override {
    return Serve(ctx, api::Access::kClient, "Prepare", ToPrepare(*request),
                 [this](engine::PrepareRequest r) { return coordinator_.Prepare(std::move(r)); });
  }

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* ctx,
                                   const dtmgimp::DtmRequest* request, Empty*) override {
    return Serve(ctx, api::Access::kClient, "Submit", ToSubmit(*request),
                 [this](engine::SubmitRequest r) { return coordinator_.Submit(std::move(r)); });
  }

  grpc::ServerUnaryReactor* Abort(grpc::CallbackServerContext* ctx,
                                  const dtmgimp::DtmRequest* request, Empty*) override {
    return Serve(ctx, api::Access::kClient, "Abort", ToAbort(*request),
                 [this](engine::AbortRequest r) { return coordinator_.Abort(std::move(r)); });
  }

  // Answered with settled's countersignature of the branch's Try, when it signs and the
  // registration named the Try (Data's "try"), as initial metadata: "settle-try-" and each
  // field's name (docs/protocol.md §10.2; DTM's reply is Empty).
  grpc::ServerUnaryReactor* RegisterBranch(grpc::CallbackServerContext* ctx,
                                           const dtmgimp::DtmBranchRequest* request,
                                           Empty*) override {
    return Serve(ctx, api::Access::kClient, "RegisterBranch", ToRegisterBranch(*request),
                 [this, ctx](engine::RegisterBranchRequest r) {
                   return RegisterAndCountersign(ctx, std::move(r));
                 });
  }

  grpc::ServerUnaryReactor* PrepareWorkflow(grpc::CallbackServerContext* ctx,
                                            const dtmgimp::DtmRequest*,
                                            dtmgimp::DtmProgressesReply*) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    if (auto refused = Authorize(*ctx, api::Access::kClient, "PrepareWorkflow")) {
      reactor->Finish(*refused);
      return reactor;
    }
    reactor->Finish({grpc::StatusCode::UNIMPLEMENTED,
                     "PrepareWorkflow: workflow transactions are not served by settle; saga, "
                     "tcc, msg and xa are"});
    return reactor;
  }

  grpc::ServerUnaryReactor* Subscribe(grpc::CallbackServerContext* ctx,
                                      const dtmgimp::DtmTopicRequest* request, Empty*) override {
    return Serve(
        ctx, api::Access::kClient, "Subscribe", ToSubscription(*request),
        [this](engine::SubscribeRequest r) { return coordinator_.Subscribe(std::move(r)); },
        kTopicUrl);
  }

  grpc::ServerUnaryReactor* Unsubscribe(grpc::CallbackServerContext* ctx,
                                        const dtmgimp::DtmTopicRequest* request, Empty*) override {
    return Serve(
        ctx, api::Access::kClient, "Unsubscribe", ToSubscription(*request),
        [this](engine::SubscribeRequest r) { return coordinator_.Unsubscribe(std::move(r)); },
        kTopicUrl);
  }

  grpc::ServerUnaryReactor* DeleteTopic(grpc::CallbackServerContext* ctx,
                                        const dtmgimp::DtmTopicRequest* request, Empty*) override {
    return Serve(
        ctx, api::Access::kAdmin, "DeleteTopic", ToDeleteTopic(*request),
        [this](engine::DeleteTopicRequest r) { return coordinator_.DeleteTopic(std::move(r)); },
        kTopicUrl);
  }

 private:
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

  // Authorizes, then runs `operation` on the translated request as a coroutine on the I/O
  // threads, which finishes the call with its Status.
  template <typename Request, typename Operation>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* ctx, api::Access needed,
                                  std::string_view method, Result<Request> translated,
                                  Operation operation, std::string_view url_name = "Data.url") {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    api::Caller caller;
    if (auto refused = Authorize(*ctx, needed, method, &caller)) {
      reactor->Finish(*refused);
      return reactor;
    }
    // Who asks, for the coordinator's ownership rules and quotas (engine/ownership.h).
    if constexpr (requires { translated->requester; }) {
      if (translated) translated->requester = api::RequesterOf(caller, authentication_.enabled());
    }
    if (!translated) {
      reactor->Finish(ToGrpcStatus(translated.status(), url_name));
      return reactor;
    }
    const std::vector<std::string> unknown = engine::UnknownFields(translated->unread_fields);
    if (!unknown.empty()) ctx->AddInitialMetadata(kIgnoredFieldsKey, engine::ListOfFields(unknown));
    asio::co_spawn(context_, operation(std::move(*translated)),
                   [reactor, url_name, method](std::exception_ptr failure, Status status) {
                     if (failure) {
                       std::string what = "unknown exception";
                       try {
                         std::rethrow_exception(failure);
                       } catch (const std::exception& e) {
                         what = e.what();
                       } catch (...) {
                       }
                       spdlog::critical("gRPC {} failed with an exception (a bug): {}", method,
                                        what);
                       reactor->Finish({grpc::StatusCode::INTERNAL, "internal error: " + what});
                       return;
                     }
                     reactor->Finish(ToGrpcStatus(status, url_name));
                   });
    return reactor;
  }

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
  api::RefusalLog* const refusals_;  // null: refusals are not logged
};

}  // namespace

struct GrpcServer::Impl {
  GrpcServerOptions options;
  std::unique_ptr<DtmService> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  bool stopped = false;
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Stop(Duration(0)); }

int GrpcServer::port() const { return impl_->port; }

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
  impl->service =
      std::make_unique<DtmService>(coordinator, context, impl->options.tokens,
                                   impl->options.client_certificates, impl->options.refusals);
  grpc::ServerBuilder builder;
  const std::string address = JoinHostPort(o.host, o.port);
  builder.AddListeningPort(address, credentials, &impl->port);
  builder.RegisterService(impl->service.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             static_cast<int>(std::min<std::int64_t>(
                                 o.idle_timeout.count(), std::numeric_limits<int>::max())));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, o.max_calls_per_connection);
  grpc::ResourceQuota quota("settled-grpc-api");
  quota.Resize(o.memory_quota_bytes);
  builder.SetResourceQuota(quota);
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port == 0) {
    return Status::Unavailable("cannot serve gRPC on " + address +
                               " (taken, or not an address of this host)");
  }
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

void GrpcServer::Stop(Duration grace) {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  // A deadline on gRPC's own monotonic clock, which its timers run on.
  const gpr_timespec deadline =
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(grace.count(), GPR_TIMESPAN));
  impl_->server->Shutdown(deadline);
  impl_->server->Wait();
}

}  // namespace settle::grpc_api
