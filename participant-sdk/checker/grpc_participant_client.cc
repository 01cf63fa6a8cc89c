#include "grpc_participant_client.h"

#include <grpcpp/grpcpp.h>

#include "settle/core/ascii.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_target.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/signing/request_signature.h"

namespace settle::checker {
namespace {

// Whether a grpcs:// connection that never became ready ended in the TLS handshake, from the
// status's message: gRPC says so ("Handshake failed") when its side of the handshake failed.
// In TLS 1.3 the client's side ends before the server has judged the client's certificate, so
// a server that refuses it (none, another CA's, an expired one) just closes the connection, and
// gRPC reports "Socket closed" for an address it had connected to.
bool EndedInHandshake(const std::string& message) {
  const std::string lower = AsciiLowercase(message);
  return lower.find("handshake") != std::string::npos ||
         lower.find("socket closed") != std::string::npos;
}

}  // namespace

Unavailable ReadUnavailable(bool tls, bool channel_ready, const std::string& message) {
  if (tls && EndedInHandshake(message)) return Unavailable::kHandshakeFailed;
  return channel_ready ? Unavailable::kAnswer : Unavailable::kUnreachable;
}

GrpcParticipantClient::GrpcParticipantClient(
    std::unique_ptr<ParticipantClient> http,
    std::vector<std::pair<std::string, std::string>> headers, Duration timeout, CheckerTls tls,
    std::optional<signing::SigningKey> signing_key)
    : http_(std::move(http)),
      headers_(std::move(headers)),
      timeout_(std::max(timeout, Duration(1))),
      tls_(std::move(tls)),
      signing_key_(std::move(signing_key)) {
  const auto text_of = [this](const char* flag, const std::string& file) {
    if (file.empty() || !tls_error_.empty()) return std::string();
    Result<std::string> read = ReadFileText(file);
    if (!read) tls_error_ = std::string(flag) + ": " + read.status().message();
    return read ? std::move(*read) : std::string();
  };
  channels_ = std::make_unique<grpc_unary::ChannelPool>(
      grpc_unary::ChannelTls{.pem_roots = text_of("--ca-file", tls_.ca_file),
                             .pem_cert_chain = text_of("--tls-client-cert", tls_.client_cert_file),
                             .pem_private_key = text_of("--tls-client-key", tls_.client_key_file)});
}

GrpcParticipantClient::~GrpcParticipantClient() = default;

Answer GrpcParticipantClient::CallBranch(const BranchCall& call) {
  if (!LooksLikeGrpcTarget(call.url)) return http_->CallBranch(call);
  Result<GrpcTarget> target = ParseGrpcTarget(call.url);
  if (!target) {
    return Answer::None(Answer::Delivery::kUnreachable,
                        "invalid gRPC method '" + call.url + "': " + target.status().message());
  }
  if (target->tls && !tls_error_.empty()) {
    return Answer::None(Answer::Delivery::kUnreachable, tls_error_);
  }
  grpc_unary::UnaryRequest request{
      .method = target->method, .message = call.body, .timeout = timeout_};
  for (const auto& [name, value] : headers_) {
    if (!IsGrpcMetadataHeader(name, value)) {
      return Answer::None(Answer::Delivery::kUnreachable,
                          "--header " + name + ": cannot be sent as gRPC metadata");
    }
    request.metadata.emplace_back(grpc_unary::MetadataKey(name), value);
  }
  grpc_unary::AddBranchMetadata(request.metadata,
                                {.gid = call.gid,
                                 .trans_type = std::string(ToString(call.trans_type)),
                                 .branch_id = call.branch_id,
                                 .op = std::string(ToString(call.op)),
                                 .dtm = "settle-check"});
  if (signing_key_ && call.signing != Signing::kUnsigned) {
    const SystemClock clock;
    // A Try as settled countersigns it for its initiator (docs/protocol.md §4.9).
    const std::string_view tag = call.op == BranchOp::kTry ? signing::kRegisteredTryTag : "";
    if (Status s = grpc_unary::SignUnary(request, *target, *signing_key_,
                                         ToUnixMillis(clock.Now()) / 1000, true, tag);
        !s.ok()) {
      return Answer::None(Answer::Delivery::kUnreachable, "signing the call: " + s.message());
    }
    // What a man in the middle could send: the signed call with other bytes.
    if (call.signing == Signing::kTampered) request.message += " ";
  }
  const std::shared_ptr<grpc::Channel> channel = channels_->To(*target);
  const grpc_unary::UnaryAnswer unary = grpc_unary::CallUnary(channel, std::move(request));
  switch (static_cast<grpc::StatusCode>(unary.code)) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Answer::None(Answer::Delivery::kNoAnswer, "timed out after " +
                                                           std::to_string(timeout_.count()) +
                                                           " ms waiting for " + target->HostPort());
    case grpc::StatusCode::UNAVAILABLE:
      // Only a channel that connected is READY (one that failed is in TRANSIENT_FAILURE, or
      // already CONNECTING or IDLE again); a refused client certificate may leave it READY.
      switch (ReadUnavailable(target->tls,
                              channel->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY,
                              unary.message)) {
        case Unavailable::kHandshakeFailed:
          // Worded as the HTTP client words it.
          return Answer::None(Answer::Delivery::kUnreachable,
                              "TLS handshake with " + target->HostPort() +
                                  " failed: " + unary.message + HandshakeFailureHint(tls_));
        case Unavailable::kUnreachable:
          return Answer::None(Answer::Delivery::kUnreachable,
                              target->HostPort() + ": " + unary.message);
        case Unavailable::kAnswer:
          break;
      }
      break;
    default:
      break;
  }
  Answer answer;
  answer.grpc_code = unary.code;
  answer.body = unary.message;
  return answer;
}

}  // namespace settle::checker
