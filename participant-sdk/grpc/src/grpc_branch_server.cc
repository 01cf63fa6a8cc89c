#include "settle/sdk/grpc_branch_server.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "settle/async/asio.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_codes.h"
#include "settle/core/url.h"
#include "settle/grpc_listen/connection_gate.h"
#include "settle/grpc_listen/first_message_watch.h"
#include "settle/grpc_listen/server_limits.h"
#include "settle/sdk/call_trace.h"
#include "settle/sdk/caught.h"
#include "settle/sdk/msg_barrier.h"
#include "settle/sdk/served_authorities.h"
#include "settle/signing/refusal_kind.h"

namespace settle::sdk {
namespace {

grpc::Status ToGrpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return {static_cast<grpc::StatusCode>(GrpcCodeOf(status.code())), status.message()};
}

std::string Metadata(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                     const char* key, bool& present) {
  const auto it = metadata.find(key);
  present = it != metadata.end();
  return present ? std::string(it->second.data(), it->second.size()) : std::string();
}

// The call's metadata as the headers a handler reads (BranchRequest::headers), from which its
// trace context is read too.
std::multimap<std::string, std::string> HeadersOf(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  std::multimap<std::string, std::string> headers;
  for (const auto& [key, value] : metadata) {
    headers.emplace(std::string(key.data(), key.size()), std::string(value.data(), value.size()));
  }
  return headers;
}

// The dtm-* metadata as the query parameters an HTTP branch URL would carry.
std::multimap<std::string, std::string> ParamsOf(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  std::multimap<std::string, std::string> params;
  for (const auto& [key, param] :
       {std::pair{"dtm-gid", "gid"}, std::pair{"dtm-trans_type", "trans_type"},
        std::pair{"dtm-branch_id", "branch_id"}, std::pair{"dtm-op", "op"}}) {
    bool present = false;
    std::string value = Metadata(metadata, key, present);
    if (present) params.emplace(param, std::move(value));
  }
  return params;
}

// The dtm-* metadata into `request`, as ParseBranchQuery reads an HTTP branch URL's query.
Status ReadBranchMetadata(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                          BranchRequest& request) {
  Status s = ParseBranchQuery(ParamsOf(metadata), request);
  if (s.ok()) return s;
  // Name the metadata key, not the query parameter the HTTP form has.
  return Status::Conflict("dtm-" + s.message());
}

// The dtm-* metadata into `request`, as ParseResumeQuery reads a resume URL's query.
Status ReadResumeMetadata(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                          ResumeRequest& request) {
  Status s = ParseResumeQuery(ParamsOf(metadata), request);
  if (s.ok()) return s;
  return Status::Conflict("dtm-" + s.message());
}

// What a method serves: one op, any op, an XA branch (its action and its phase 2), a message's
// back-check, or a workflow's resume.
struct Route {
  std::optional<BranchOp> op;
  bool xa = false;
  bool back_check = false;  // settled's alone, whatever op the call names
  BranchHandler handler;
  ResumeHandler resume;  // a workflow's resume: settled's alone
};

// The input `message` carries: `WorkflowData { bytes data = 1; }`, as protobuf encodes it (an
// empty message: no input). InvalidArgument for anything else.
Status ReadWorkflowData(std::string_view message, std::string& input) {
  input.clear();
  std::size_t at = 0;
  auto varint = [&](std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && at < message.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(message[at++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  };
  while (at < message.size()) {
    std::uint64_t tag = 0;
    std::uint64_t length = 0;
    if (!varint(tag) || tag != 0x0a || !varint(length) || length > message.size() - at) {
      return Status::InvalidArgument("WorkflowData: not the message {bytes data = 1}");
    }
    input.assign(message.substr(at, length));  // a later value of a field wins, as protobuf has it
    at += length;
  }
  return Status::Ok();
}

// Whether `request` is the initiator's call, and so judged by SignedCalls::try_policy. Decided
// by the route the caller chose, never by its metadata alone: a Try only on a method that
// serves Trys (OnTry, OnBranch), an XA action only on an OnXa method. Any other call is
// settled's, whatever dtm-trans_type and dtm-op it claims (Participant::ServeBranch and
// ServeXa follow the same rule over HTTP).
CallKind KindOf(const Route& route, const BranchRequest& request) {
  if (route.back_check) return CallKind::kCoordinators;
  if (route.xa)
    return request.op == BranchOp::kAction ? CallKind::kXaAction : CallKind::kCoordinators;
  return BranchCallKind(route.op, request);
}

// An XA method's calls, as ParseXaQuery checks an HTTP XA URL's query: trans_type xa; op
// action (with a dtm-phase2_url), commit or rollback. Conflict naming the metadata key.
Status CheckXaCall(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                   const BranchRequest& request) {
  if (request.trans_type != TransType::kXa) {
    return Status::Conflict("dtm-trans_type: this method takes xa");
  }
  if (request.op != BranchOp::kAction && request.op != BranchOp::kCommit &&
      request.op != BranchOp::kRollback) {
    return Status::Conflict("dtm-op: expected action, commit or rollback");
  }
  if (request.op == BranchOp::kAction) {
    bool present = false;
    if (Metadata(metadata, "dtm-phase2_url", present).empty()) {
      return Status::Conflict("dtm-phase2_url: required for an XA action");
    }
  }
  return Status::Ok();
}

class BranchReactor final : public grpc::ServerGenericBidiReactor {
 public:
  BranchReactor(grpc::GenericCallbackServerContext* context, GrpcBranchServer::Impl& server);
  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  void Answer(const BranchReply& reply);
  // Whether a call whose message is read (`read`: how reading its metadata went) goes on: a
  // call the server's policy refuses for `kind` is finished, then one that could not be read is
  // answered its error (so that an unsigned call learns nothing of its metadata).
  bool Admitted(const std::string& message, CallKind kind, const Status& read);
  // Runs `handle` on `call` (its headers and trace filled in) on the handler pool, never on
  // gRPC's threads (the business code may block), and answers what it returns.
  template <typename Call, typename Handle>
  void Dispatch(Call call, Handle handle);
  void ServeResume(const ResumeHandler& handler, const std::string& method,
                   const std::string& message);

  grpc::GenericCallbackServerContext* context_;
  GrpcBranchServer::Impl& server_;
  grpc_listen::FirstMessageWatch::Waiting waiting_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

class Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(GrpcBranchServer::Impl& server) : server_(server) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new BranchReactor(context, server_);
  }

 private:
  GrpcBranchServer::Impl& server_;
};

}  // namespace

struct GrpcBranchServer::Impl {
  explicit Impl(GrpcBranchServerOptions o)
      : options(std::move(o)),
        pool(options.threads),
        watch(options.first_message_timeout,
              grpc_listen::WaitingStreamBudget(options.memory_limit_bytes), options.clock),
        service(*this) {}

  GrpcBranchServerOptions options;
  SystemClock default_clock;
  const Clock* clock = options.clock != nullptr ? options.clock : &default_clock;
  SignatureRefusalCounter refusals;
  std::map<std::string, Route> routes;  // by method; fixed once serving
  asio::thread_pool pool;
  grpc_listen::FirstMessageWatch watch;
  Service service;
  std::unique_ptr<grpc_listen::ConnectionGate> gate;  // Start's server, or ListenFor's port
  std::atomic<const grpc_listen::ConnectionGate*> gate_seen{nullptr};  // gate, for bound_counts
  bool mounted = false;
  std::unique_ptr<grpc::Server> own_server;
  // The names signed calls must be made for, once Start or MountOn knows them (null before).
  std::atomic<std::shared_ptr<const std::vector<std::string>>> authorities;

  bool NeedsNames() const { return options.signed_calls && options.signed_calls->check_authority; }
  void SetNames(std::vector<std::string> names) {
    authorities.store(std::make_shared<const std::vector<std::string>>(std::move(names)));
  }
};

namespace {

// The first value of metadata `key`, empty when absent: for a log line.
std::string_view FirstValue(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                            const char* key) {
  const auto it = metadata.find(key);
  return it == metadata.end() ? std::string_view()
                              : std::string_view(it->second.data(), it->second.size());
}

// Whether the call may run a handler: signed as the server's policy asks, or no policy. A
// refusal is counted and logged once, with the caller's address and what the call named; its
// status is UNAUTHENTICATED with a reason that is no verdict (the coordinator retries it, and
// never reads it as FAILURE).
grpc::Status Admit(GrpcBranchServer::Impl& server,
                   const grpc::GenericCallbackServerContext& context, const std::string& message,
                   CallKind kind) {
  if (!server.options.signed_calls) return grpc::Status::OK;
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const auto& [key, value] : context.client_metadata()) {
    metadata.emplace_back(std::string(key.data(), key.size()),
                          std::string(value.data(), value.size()));
  }
  const std::shared_ptr<const std::vector<std::string>> names = server.authorities.load();
  // host() is the call's :authority, as the caller dialed it: named in a refusal, not trusted.
  const ArrivedGrpcCall call{.authority = context.host(),
                             .method = context.method(),
                             .message = message,
                             .metadata = &metadata,
                             .kind = kind,
                             .authorities = names.get()};
  const std::int64_t now = ToUnixMillis(server.clock->Now()) / 1000;
  const signing::Verdict checked = CheckSignedGrpcCall(*server.options.signed_calls, call, now);
  if (checked.ok()) return grpc::Status::OK;
  server.refusals.Count(checked.kind());
  const std::string peer = context.peer();
  const auto& arrived = context.client_metadata();
  const std::string line =
      RefusalLogLine(RefusedCall{.server = "settle grpc participant",
                                 .call = context.method(),
                                 .peer = peer,
                                 .gid = FirstValue(arrived, "dtm-gid"),
                                 .branch_id = FirstValue(arrived, "dtm-branch_id"),
                                 .op = FirstValue(arrived, "dtm-op")},
                     checked);
  std::fprintf(stderr, "%s\n", line.c_str());
  return {grpc::StatusCode::UNAUTHENTICATED, "signature: " + checked.message()};
}

// Whether `pem` holds a certificate that parses: gRPC would only find out in BuildAndStart,
// and say no more than that it cannot serve.
bool HoldsPemCertificate(const std::string& pem) {
  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (in == nullptr) return false;
  X509* certificate = PEM_read_bio_X509(in, nullptr, nullptr, nullptr);
  const bool parsed = certificate != nullptr;
  X509_free(certificate);
  BIO_free(in);
  return parsed;
}

BranchReply RunHandler(const Route& route, const BranchRequest& request) {
  if (route.op && request.op != *route.op) {
    return BranchReply::Failure("this method serves op " + std::string(ToString(*route.op)) +
                                ", not " + std::string(ToString(request.op)));
  }
  return CaughtReply("handler", [&] { return route.handler(request); });
}

}  // namespace

BranchReactor::BranchReactor(grpc::GenericCallbackServerContext* context,
                             GrpcBranchServer::Impl& server)
    : context_(context), server_(server) {
  grpc_listen::FirstMessageWatch& watch = server_.watch;
  waiting_.expire = [this, &watch] {
    Finish({grpc::StatusCode::DEADLINE_EXCEEDED, watch.ExpiryMessage("first_message_timeout")});
  };
  if (const auto refused = watch.Arm(waiting_, context->peer());
      refused != grpc_listen::FirstMessageWatch::Refusal::kNone) {
    Finish({grpc::StatusCode::RESOURCE_EXHAUSTED,
            watch.RefusalMessage(refused, "memory_limit_bytes")});
    return;
  }
  StartRead(&request_);
}

void BranchReactor::OnReadDone(bool ok) {
  // Too late: the deadline has ended the call.
  if (!server_.watch.Disarm(waiting_)) return;
  if (!ok) {
    Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request message"));
    return;
  }
  const auto route = server_.routes.find(context_->method());
  if (route == server_.routes.end()) {
    Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "no branch handler for " + context_->method()));
    return;
  }
  // Before the signature, the barrier or a handler (docs/protocol.md §10.4).
  std::vector<std::string_view> keys;
  for (const auto& [key, value] : context_->client_metadata()) {
    keys.emplace_back(key.data(), key.size());
  }
  if (Status once = CheckDtmMetadataOnce(keys); !once.ok()) {
    Finish(ToGrpc(once));
    return;
  }
  BranchRequest request;
  request.path = context_->method();
  std::vector<grpc::Slice> slices;
  if (request_.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      request.body.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  if (route->second.resume) {
    ServeResume(route->second.resume, request.path, request.body);
    return;
  }
  Status read = ReadBranchMetadata(context_->client_metadata(), request);
  if (read.ok() && route->second.xa) read = CheckXaCall(context_->client_metadata(), request);
  // Judged on the metadata as read for the handler, so that the op deciding the Try policy is
  // the op the handler sees, and on the route, so that no caller picks its own policy.
  const CallKind kind = read.ok() ? KindOf(route->second, request) : CallKind::kCoordinators;
  if (!Admitted(request.body, kind, read)) return;
  const Route* chosen = &route->second;
  Dispatch(std::move(request),
           [chosen](const BranchRequest& call) { return RunHandler(*chosen, call); });
}

void BranchReactor::ServeResume(const ResumeHandler& handler, const std::string& method,
                                const std::string& message) {
  ResumeRequest resume;
  resume.path = method;
  Status read = ReadResumeMetadata(context_->client_metadata(), resume);
  if (read.ok()) read = ReadWorkflowData(message, resume.input);
  // settled's call: an unsigned one would run (and end) a workflow of the caller's choosing.
  if (!Admitted(message, CallKind::kCoordinators, read)) return;
  Dispatch(std::move(resume), [&handler](const ResumeRequest& call) {
    BranchReply reply = CaughtReply("handler", [&] { return handler(call); });
    reply.body.clear();  // google.protobuf.Empty
    return reply;
  });
}

bool BranchReactor::Admitted(const std::string& message, CallKind kind, const Status& read) {
  if (grpc::Status admitted = Admit(server_, *context_, message, kind); !admitted.ok()) {
    Finish(admitted);
    return false;
  }
  if (!read.ok()) {
    Answer(BranchReply::Error(read));
    return false;
  }
  return true;
}

template <typename Call, typename Handle>
void BranchReactor::Dispatch(Call call, Handle handle) {
  call.headers = HeadersOf(context_->client_metadata());
  call.trace = ReadCallTrace(call.headers);
  asio::post(server_.pool,
             [this, call = std::move(call), handle = std::move(handle)] { Answer(handle(call)); });
}

void BranchReactor::Answer(const BranchReply& reply) {
  if (!reply.status.ok()) {
    Finish(ToGrpc(reply.status));
    return;
  }
  grpc::Slice bytes(reply.body);
  response_ = grpc::ByteBuffer(&bytes, 1);
  StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
}

GrpcBranchServer::GrpcBranchServer(GrpcBranchServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

GrpcBranchServer::~GrpcBranchServer() {
  Stop();
  impl_->pool.join();
}

std::uint64_t GrpcBranchServer::signature_refusals() const {
  return impl_->refusals.Snapshot().total();
}

SignatureRefusalCounts GrpcBranchServer::signature_refusal_counts() const {
  return impl_->refusals.Snapshot();
}

GrpcBranchServer& GrpcBranchServer::OnOp(const std::string& method, std::optional<BranchOp> op,
                                         BranchHandler handler) {
  impl_->routes[method] = Route{.op = op, .handler = std::move(handler)};
  return *this;
}

GrpcBranchServer& GrpcBranchServer::OnXa(const std::string& method, BranchHandler handler) {
  impl_->routes[method] = Route{.xa = true, .handler = std::move(handler)};
  return *this;
}

GrpcBranchServer& GrpcBranchServer::OnBranch(const std::string& method, BranchHandler handler) {
  return OnOp(method, std::nullopt, std::move(handler));
}
GrpcBranchServer& GrpcBranchServer::OnTry(const std::string& method, BranchHandler handler) {
  return OnOp(method, BranchOp::kTry, std::move(handler));
}
GrpcBranchServer& GrpcBranchServer::OnConfirm(const std::string& method, BranchHandler handler) {
  return OnOp(method, BranchOp::kConfirm, std::move(handler));
}
GrpcBranchServer& GrpcBranchServer::OnCancel(const std::string& method, BranchHandler handler) {
  return OnOp(method, BranchOp::kCancel, std::move(handler));
}
GrpcBranchServer& GrpcBranchServer::OnAction(const std::string& method, BranchHandler handler) {
  return OnOp(method, BranchOp::kAction, std::move(handler));
}
GrpcBranchServer& GrpcBranchServer::OnCompensate(const std::string& method, BranchHandler handler) {
  return OnOp(method, BranchOp::kCompensate, std::move(handler));
}

GrpcBranchServer& GrpcBranchServer::OnResume(const std::string& method, ResumeHandler handler) {
  impl_->routes[method] = Route{.resume = std::move(handler)};
  return *this;
}

GrpcBranchServer& GrpcBranchServer::OnQueryPrepared(const std::string& method, Barrier& barrier) {
  // An unsigned back-check would write the barrier's "rollback" row, and the message's local
  // transaction could then never commit: it is settled's call, never the initiator's.
  impl_->routes[method] = Route{.back_check = true, .handler = [&barrier](const BranchRequest& r) {
                                  return QueryPrepared(barrier, r.gid);
                                }};
  return *this;
}

Status GrpcBranchServer::MountOn(grpc::ServerBuilder& builder) {
  const GrpcBranchServerOptions& o = impl_->options;
  if (impl_->NeedsNames()) {
    if (o.authorities.empty()) {
      return Status::InvalidArgument(
          "authorities: required to mount a server with signed_calls: the names settled dials "
          "it by (host:port), since the builder's listening address is not known here");
    }
    Result<std::vector<std::string>> names = ServedAuthorities(o.authorities, "", 0, "authorities");
    if (!names) return names.status();
    impl_->SetNames(std::move(*names));
  }
  if (!o.tls_cert_file.empty() || !o.tls_key_file.empty() || !o.tls_client_ca_file.empty()) {
    std::fprintf(stderr,
                 "settle grpc participant: MountOn ignores tls_cert_file, tls_key_file and "
                 "tls_client_ca_file: TLS and client certificates are the credentials the "
                 "ServerBuilder's listening port was added with (grpc::SslServerCredentials)\n");
  }
  Mount(builder);
  return Status::Ok();
}

Result<int> GrpcBranchServer::ListenFor(grpc::ServerBuilder& builder, const std::string& host,
                                        int port,
                                        std::shared_ptr<grpc::ServerCredentials> credentials) {
  if (impl_->gate != nullptr) {
    return Status::InvalidArgument("ListenFor: this server already has its port");
  }
  const GrpcBranchServerOptions& o = impl_->options;
  auto gate =
      grpc_listen::ConnectionGate::Listen(host, port,
                                          {.max_connections = o.max_connections,
                                           .max_connections_per_peer = o.max_connections_per_peer});
  if (!gate) {
    if (gate.status().code() == StatusCode::kInvalidArgument) return gate.status();
    return Status::Unavailable("cannot serve gRPC on " + JoinHostPort(host, port) + ": " +
                               gate.status().message());
  }
  (*gate)->AttachTo(builder, std::move(credentials));
  impl_->gate = std::move(*gate);
  impl_->gate_seen.store(impl_->gate.get());
  return impl_->gate->port();
}

void GrpcBranchServer::AcceptConnections() {
  if (impl_->gate != nullptr && impl_->own_server == nullptr) impl_->gate->Start();
}

std::vector<std::string> GrpcBranchServer::authorities() const {
  const std::shared_ptr<const std::vector<std::string>> names = impl_->authorities.load();
  return names != nullptr ? *names : std::vector<std::string>();
}

void GrpcBranchServer::Mount(grpc::ServerBuilder& builder) {
  impl_->mounted = true;
  builder.RegisterCallbackGenericService(&impl_->service);
}

Result<int> GrpcBranchServer::Start(const std::string& host, int port) {
  if (impl_->gate != nullptr) {
    return Status::InvalidArgument("Start: this server already listens (ListenFor)");
  }
  if (impl_->options.signed_calls) {
    std::fprintf(stderr, "settle grpc participant: verifying signed calls with %s\n",
                 DescribeTrustedKeys(*impl_->options.signed_calls).c_str());
  }
  if (!impl_->options.tls_client_ca_file.empty() && impl_->options.tls_cert_file.empty()) {
    return Status::InvalidArgument(
        "tls_client_ca_file: client certificates need TLS (tls_cert_file, tls_key_file)");
  }
  const std::vector<std::string>& configured = impl_->options.authorities;
  if (impl_->NeedsNames() && (!configured.empty() || IsWildcardHost(host))) {
    Result<std::vector<std::string>> names =
        ServedAuthorities(configured, host, port, "authorities");
    if (!names) return names.status();
    impl_->SetNames(std::move(*names));
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!impl_->options.tls_cert_file.empty()) {
    const Result<std::string> cert = ReadFileText(impl_->options.tls_cert_file);
    if (!cert) return Status::InvalidArgument("tls_cert_file: " + cert.status().message());
    const Result<std::string> key = ReadFileText(impl_->options.tls_key_file);
    if (!key) return Status::InvalidArgument("tls_key_file: " + key.status().message());
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({*key, *cert});
    if (!impl_->options.tls_client_ca_file.empty()) {
      const Result<std::string> ca = ReadFileText(impl_->options.tls_client_ca_file);
      if (!ca) return Status::InvalidArgument("tls_client_ca_file: " + ca.status().message());
      if (!HoldsPemCertificate(*ca)) {
        return Status::InvalidArgument("tls_client_ca_file: " + impl_->options.tls_client_ca_file +
                                       " holds no PEM certificate that parses");
      }
      tls.pem_root_certs = *ca;
      tls.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    credentials = grpc::SslServerCredentials(tls);
  }
  const GrpcBranchServerOptions& o = impl_->options;
  const std::string address = JoinHostPort(host, port);
  auto gate =
      grpc_listen::ConnectionGate::Listen(host, port,
                                          {.max_connections = o.max_connections,
                                           .max_connections_per_peer = o.max_connections_per_peer});
  if (!gate) {
    if (gate.status().code() == StatusCode::kInvalidArgument) return gate.status();
    return Status::Unavailable("cannot serve gRPC on " + address + ": " + gate.status().message());
  }
  grpc::ServerBuilder builder;
  (*gate)->AttachTo(builder, credentials);
  grpc_listen::ApplyServerLimits(builder, {.max_message_bytes = o.max_message_bytes,
                                           .idle_timeout = o.idle_timeout,
                                           .handshake_timeout = o.first_message_timeout,
                                           .max_streams_per_connection = o.max_calls_per_connection,
                                           .memory_quota_bytes = o.memory_limit_bytes});
  Mount(builder);
  impl_->own_server = builder.BuildAndStart();
  if (impl_->own_server == nullptr) return Status::Unavailable("cannot serve gRPC on " + address);
  impl_->gate = std::move(*gate);
  impl_->gate_seen.store(impl_->gate.get());
  impl_->gate->Start();
  const int bound = impl_->gate->port();
  if (impl_->NeedsNames() && configured.empty()) {
    impl_->SetNames(*ServedAuthorities({}, host, bound, "authorities"));
  }
  return bound;
}

GrpcBranchServerCounts GrpcBranchServer::bound_counts() const {
  GrpcBranchServerCounts counts{.waiting_calls = impl_->watch.waiting(),
                                .first_message_timeouts = impl_->watch.expired(),
                                .waiting_refusals = impl_->watch.refused()};
  const grpc_listen::ConnectionGate* gate = impl_->gate_seen.load();
  if (gate != nullptr) {
    const grpc_listen::ConnectionCounts connections = gate->counts();
    counts.open_connections = connections.open;
    counts.refused_connections = connections.refused_total + connections.refused_per_peer;
  }
  return counts;
}

void GrpcBranchServer::Stop() {
  if (impl_->own_server == nullptr) {
    if (impl_->gate != nullptr) impl_->gate->Stop();  // ListenFor's: its server is its owner's
    return;
  }
  // No new connection is handed to a server that is shutting down.
  impl_->gate->Stop();
  impl_->own_server->Shutdown();
  impl_->own_server.reset();
}

}  // namespace settle::sdk
