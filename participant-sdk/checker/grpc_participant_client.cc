#include "grpc_participant_client.h"

#include <grpcpp/grpcpp.h>

#include "settle/core/file_text.h"
#include "settle/core/grpc_target.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"

namespace settle::checker {

GrpcParticipantClient::GrpcParticipantClient(
    std::unique_ptr<ParticipantClient> http,
    std::vector<std::pair<std::string, std::string>> headers, Duration timeout, std::string ca_file,
    std::optional<signing::SigningKey> signing_key)
    : http_(std::move(http)),
      headers_(std::move(headers)),
      timeout_(std::max(timeout, Duration(1))),
      signing_key_(std::move(signing_key)) {
  std::string roots;
  if (!ca_file.empty()) {
    if (Result<std::string> read = ReadFileText(ca_file)) {
      roots = std::move(*read);
    } else {
      roots_error_ = read.status().message();
    }
  }
  channels_ = std::make_unique<grpc_unary::ChannelPool>(std::move(roots));
}

GrpcParticipantClient::~GrpcParticipantClient() = default;

Answer GrpcParticipantClient::CallBranch(const BranchCall& call) {
  if (!LooksLikeGrpcTarget(call.url)) return http_->CallBranch(call);
  Result<GrpcTarget> target = ParseGrpcTarget(call.url);
  if (!target) {
    return Answer::None(Answer::Delivery::kUnreachable,
                        "invalid gRPC method '" + call.url + "': " + target.status().message());
  }
  if (target->tls && !roots_error_.empty()) {
    return Answer::None(Answer::Delivery::kUnreachable, "--ca-file: " + roots_error_);
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
    if (Status s = grpc_unary::SignUnary(request, *target, *signing_key_,
                                         ToUnixMillis(clock.Now()) / 1000);
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
      // gRPC says UNAVAILABLE both when it could not connect and when the method answered so;
      // only a channel that connected is READY (one that failed is in TRANSIENT_FAILURE, or
      // already CONNECTING or IDLE again).
      if (channel->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY) {
        return Answer::None(Answer::Delivery::kUnreachable,
                            target->HostPort() + ": " + unary.message);
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
