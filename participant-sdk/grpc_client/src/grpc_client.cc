#include "settle/sdk/grpc_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "dtm_request.h"
#include "dtmgimp.grpc.pb.h"
#include "settle/core/base64.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_codes.h"
#include "settle/core/grpc_target.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/sdk/client.h"

namespace settle::sdk {
namespace {

// A deadline `timeout` from now, on gRPC's own clock.
gpr_timespec DeadlineIn(std::chrono::milliseconds timeout) {
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                      gpr_time_from_millis(timeout.count(), GPR_TIMESPAN));
}

std::string Describe(int code, const std::string& status_message) {
  const std::string message = status_message.substr(0, 500);
  return GrpcCodeName(code) + (message.empty() ? "" : ": " + message);
}

std::string Describe(const grpc::Status& status) {
  return Describe(static_cast<int>(status.error_code()), status.error_message());
}

// The coordinator's answer as the initiators read it (the header's table).
Status StatusOfAnswer(std::string_view rpc, const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return Status::Ok();
    case grpc::StatusCode::ABORTED:
      return Status::Conflict(status.error_message());
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Status::Pending(status.error_message());
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Status::InvalidArgument(status.error_message());
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      // Not retryable, and the caller's to fix: an argument (the token), not an outage.
      return Status::InvalidArgument("coordinator refused credentials (" + Describe(status) + ")");
    default:
      break;
  }
  return Status::Unavailable(std::string(rpc) + ": " + Describe(status));
}

Status CheckMetadata(const std::map<std::string, std::string>& metadata) {
  for (const auto& [name, value] : metadata) {
    if (name != grpc_unary::MetadataKey(name) || !IsGrpcMetadataHeader(name, value)) {
      return Status::InvalidArgument("metadata." + name +
                                     ": gRPC metadata needs a lowercase name of [0-9a-z-_.] and "
                                     "a printable ASCII value");
    }
  }
  return Status::Ok();
}

}  // namespace

struct GrpcClient::Impl {
  GrpcClientOptions options;
  std::string coordinator;     // as given: what dtm-dtm tells a participant
  grpc_unary::ChannelTls tls;  // PEM roots (empty: the system's) and client certificate
  std::shared_ptr<grpc::Channel> coordinator_channel;
  std::unique_ptr<dtmgimp::Dtm::Stub> stub;
  std::unique_ptr<Client> http;  // GrpcClientOptions::http_server; null without one
  std::unique_ptr<grpc_unary::ChannelPool> branches;  // channels for Try calls

  std::shared_ptr<grpc::ChannelCredentials> Credentials(bool tls) const {
    if (!tls) return grpc::InsecureChannelCredentials();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = this->tls.pem_roots;
    ssl.pem_cert_chain = this->tls.pem_cert_chain;
    ssl.pem_private_key = this->tls.pem_private_key;
    return grpc::SslCredentials(ssl);
  }

  // A context for one call to the coordinator, with its metadata and deadline. `trace`: the
  // transaction's trace fields (TraceFields), in place of the options' metadata of the same
  // names.
  void Prepare(grpc::ClientContext& context, bool wait_result,
               const std::vector<std::pair<std::string, std::string>>& trace = {}) const {
    for (const auto& [name, value] : options.metadata) {
      const bool replaced = std::any_of(trace.begin(), trace.end(),
                                        [&name](const auto& field) { return field.first == name; });
      if (!replaced) context.AddMetadata(name, value);
    }
    for (const auto& [name, value] : trace) context.AddMetadata(name, value);
    context.set_deadline(DeadlineIn(
        options.timeout + (wait_result ? kWaitResultAllowance : std::chrono::milliseconds(0))));
  }
};

Result<std::unique_ptr<GrpcClient>> GrpcClient::Create(const std::string& server,
                                                       GrpcClientOptions options) {
  Result<GrpcTarget> target = ParseGrpcOrigin(server);
  if (!target) {
    return Status::InvalidArgument("server '" + server +
                                   "': expected grpc://host:port, grpcs://host:port or host:port");
  }
  if (options.timeout <= std::chrono::milliseconds::zero()) {
    return Status::InvalidArgument("timeout: must be positive");
  }
  if (Status s = CheckMetadata(options.metadata); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return Status::InvalidArgument("client_cert_file, client_key_file: both or neither");
  }
  // Each PEM file named, read now: InvalidArgument naming the option.
  const std::pair<const std::string*, std::string*> files[] = {
      {&options.ca_file, &impl->tls.pem_roots},
      {&options.client_cert_file, &impl->tls.pem_cert_chain},
      {&options.client_key_file, &impl->tls.pem_private_key}};
  const char* const names[] = {"ca_file", "client_cert_file", "client_key_file"};
  for (std::size_t i = 0; i < std::size(files); ++i) {
    if (files[i].first->empty()) continue;
    Result<std::string> text = ReadFileText(*files[i].first);
    if (!text)
      return Status::InvalidArgument(std::string(names[i]) + ": " + text.status().message());
    *files[i].second = std::move(*text);
  }
  if (!options.http_server.empty()) {
    ClientOptions http_options{.timeout = options.timeout,
                               .ca_file = options.ca_file,
                               .client_cert_file = options.client_cert_file,
                               .client_key_file = options.client_key_file,
                               .signing_key = options.signing_key};
    for (const auto& [name, value] : options.metadata) http_options.headers.emplace(name, value);
    auto http = Client::Create(options.http_server, std::move(http_options));
    if (!http) return Status::InvalidArgument("http_server: " + http.status().message());
    impl->http = std::move(*http);
  }
  impl->coordinator = target->HostPort();
  impl->branches = std::make_unique<grpc_unary::ChannelPool>(impl->tls);
  impl->coordinator_channel =
      grpc::CreateChannel(target->HostPort(), impl->Credentials(target->tls));
  impl->stub = dtmgimp::Dtm::NewStub(impl->coordinator_channel);
  impl->options = std::move(options);
  return std::unique_ptr<GrpcClient>(new GrpcClient(std::move(impl)));
}

GrpcClient::GrpcClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcClient::~GrpcClient() = default;

std::chrono::milliseconds GrpcClient::timeout() const { return impl_->options.timeout; }

Result<std::string> GrpcClient::NewGid() {
  grpc::ClientContext context;
  impl_->Prepare(context, false);
  dtmgimp::DtmGidReply reply;
  const grpc::Status status = impl_->stub->NewGid(&context, google::protobuf::Empty(), &reply);
  if (Status s = StatusOfAnswer("NewGid", status); !s.ok()) return s;
  if (reply.gid().empty()) return Status::Unavailable("NewGid: the answer has no Gid");
  return reply.gid();
}

Result<std::optional<TransactionInfo>> GrpcClient::Query(const std::string& gid) {
  if (impl_->http == nullptr) {
    return Status::InvalidArgument(
        "query: DTM's gRPC API has none; set GrpcClientOptions::http_server to the "
        "coordinator's HTTP API");
  }
  return impl_->http->Query(gid);
}

Result<std::string> GrpcClient::Send(GlobalOp op, const GlobalCall& call) {
  Result<dtmgimp::DtmRequest> request = ToDtmRequest(call);
  if (!request) return request.status();
  grpc::ClientContext context;
  impl_->Prepare(context, call.options.wait_result,
                 TraceFields(call.options.traceparent, call.options.tracestate));
  google::protobuf::Empty reply;
  grpc::Status status;
  std::string_view rpc;
  switch (op) {
    case GlobalOp::kPrepare:
      rpc = "Prepare";
      status = impl_->stub->Prepare(&context, *request, &reply);
      break;
    case GlobalOp::kSubmit:
      rpc = "Submit";
      status = impl_->stub->Submit(&context, *request, &reply);
      break;
    case GlobalOp::kAbort:
      rpc = "Abort";
      status = impl_->stub->Abort(&context, *request, &reply);
      break;
  }
  if (Status s = StatusOfAnswer(rpc, status); !s.ok()) return s;
  return std::string();
}

Result<RegisteredBranch> GrpcClient::RegisterBranch(const BranchRegistration& branch) {
  grpc::ClientContext context;
  impl_->Prepare(context, false, TraceFields(branch.traceparent, branch.tracestate));
  google::protobuf::Empty reply;
  const grpc::Status status =
      impl_->stub->RegisterBranch(&context, ToDtmBranchRequest(branch), &reply);
  if (Status s = StatusOfAnswer("RegisterBranch", status); !s.ok()) return s;
  // settled's countersignature of the Try, when it gave one: settle-try-<field> metadata.
  RegisteredBranch registered;
  for (const auto& [key, value] : context.GetServerInitialMetadata()) {
    const std::string_view name(key.data(), key.size());
    if (!name.starts_with(kTrySignatureMetadataPrefix)) continue;
    registered.try_signature.emplace_back(name.substr(kTrySignatureMetadataPrefix.size()),
                                          std::string(value.data(), value.size()));
  }
  return registered;
}

Result<WorkflowState> GrpcClient::PrepareWorkflow(const GlobalCall& call) {
  Result<dtmgimp::DtmRequest> request = ToDtmRequest(call);
  if (!request) return request.status();
  grpc::ClientContext context;
  impl_->Prepare(context, false, TraceFields(call.options.traceparent, call.options.tracestate));
  dtmgimp::DtmProgressesReply reply;
  const grpc::Status status = impl_->stub->PrepareWorkflow(&context, *request, &reply);
  if (Status s = StatusOfAnswer("PrepareWorkflow", status); !s.ok()) return s;
  WorkflowState state;
  const std::optional<GlobalStatus> global = ParseGlobalStatus(reply.transaction().status());
  if (!global) {
    return Status::Unavailable("PrepareWorkflow: status \"" + reply.transaction().status() +
                               "\" in the answer");
  }
  state.status = *global;
  state.rollback_reason = reply.transaction().rollbackreason();
  std::optional<std::string> result = Base64Decode(reply.transaction().result());
  if (!result) return Status::Unavailable("PrepareWorkflow: the answer's Result is not base64");
  state.result = std::move(*result);
  for (const dtmgimp::DtmProgress& p : reply.progresses()) {
    state.progresses.push_back(StepProgress{p.branchid(), p.op(), p.status(), p.bindata()});
  }
  return state;
}

Status GrpcClient::CheckOwnBranchUrl(const std::string& url) const {
  if (LooksLikeGrpcTarget(url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(url);
    if (!target) return Status::InvalidArgument("'" + url + "' " + target.status().message());
    return Status::Ok();
  }
  if (Result<Url> parsed = ParseUrl(url); !parsed) {
    return Status::InvalidArgument("'" + url + "' " + parsed.status().message());
  }
  if (impl_->http == nullptr) {
    return Status::InvalidArgument("'" + url +
                                   "' is an HTTP URL: the gRPC client calls one only when "
                                   "GrpcClientOptions::http_server is set");
  }
  return Status::Ok();
}

Result<BranchAnswer> GrpcClient::CallBranch(const OwnBranchCall& call) {
  if (Status s = CheckOwnBranchUrl(call.url); !s.ok()) return s;
  if (!LooksLikeGrpcTarget(call.url)) return impl_->http->CallBranch(call);
  const GrpcTarget target = *ParseGrpcTarget(call.url);

  grpc_unary::UnaryRequest request{
      .method = target.method, .message = call.body, .timeout = call.timeout};
  for (const auto& [name, value] : call.headers) {
    if (!IsGrpcMetadataHeader(name, value)) {
      return Status::InvalidArgument("branch_headers." + name +
                                     ": cannot be sent as gRPC metadata (a name of "
                                     "[0-9A-Za-z-_.], not grpc-*, and a printable ASCII value)");
    }
    request.metadata.emplace_back(grpc_unary::MetadataKey(name), value);
  }
  // settled's countersignature covers the four words alone: no dtm-dtm beside them.
  const bool countersigned = !call.signature.empty() && !impl_->options.signing_key;
  // As the coordinator calls a gRPC branch (docs/protocol.md §10.4).
  grpc_unary::AddBranchMetadata(request.metadata, {.gid = call.gid,
                                                   .trans_type = call.trans_type,
                                                   .branch_id = call.branch_id,
                                                   .op = call.op,
                                                   .dtm = impl_->coordinator,
                                                   .extra = call.extra});
  if (countersigned) {
    std::erase_if(request.metadata, [](const auto& m) { return m.first == "dtm-dtm"; });
    for (const auto& [name, value] : call.signature) {
      request.metadata.emplace_back(grpc_unary::MetadataKey(name), value);
    }
  }
  if (impl_->options.signing_key) {
    const SystemClock clock;
    if (Status s = grpc_unary::SignUnary(request, target, *impl_->options.signing_key,
                                         ToUnixMillis(clock.Now()) / 1000);
        !s.ok()) {
      return Status::InvalidArgument("signing the call: " + s.message());
    }
  }
  grpc_unary::UnaryAnswer unary =
      grpc_unary::CallUnary(impl_->branches->To(target), std::move(request));
  BranchAnswer answer;
  answer.result = ClassifyGrpcCode(unary.code);
  answer.description = Describe(unary.code, unary.message);
  answer.body = std::move(unary.response);
  return answer;
}

}  // namespace settle::sdk
