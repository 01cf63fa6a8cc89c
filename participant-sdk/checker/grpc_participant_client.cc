#include "grpc_participant_client.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <future>

#include "settle/core/file_text.h"
#include "settle/core/grpc_target.h"

namespace settle::checker {
namespace {

Answer NoAnswer(Answer::Delivery delivery, std::string error) {
  Answer answer;
  answer.delivery = delivery;
  answer.error = std::move(error);
  return answer;
}

std::string Lowercase(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace

GrpcParticipantClient::GrpcParticipantClient(
    std::unique_ptr<ParticipantClient> http,
    std::vector<std::pair<std::string, std::string>> headers, Duration timeout, std::string ca_file)
    : http_(std::move(http)),
      headers_(std::move(headers)),
      timeout_(std::max(timeout, Duration(1))) {
  if (ca_file.empty()) return;
  if (Result<std::string> roots = ReadFileText(ca_file)) {
    roots_ = std::move(*roots);
  } else {
    roots_error_ = roots.status().message();
  }
}

GrpcParticipantClient::~GrpcParticipantClient() = default;

Answer GrpcParticipantClient::CallBranch(const BranchCall& call) {
  if (!LooksLikeGrpcTarget(call.url)) return http_->CallBranch(call);
  Result<GrpcTarget> target = ParseGrpcTarget(call.url);
  if (!target) {
    return NoAnswer(Answer::Delivery::kUnreachable,
                    "invalid gRPC method '" + call.url + "': " + target.status().message());
  }
  if (target->tls && !roots_error_.empty()) {
    return NoAnswer(Answer::Delivery::kUnreachable, "--ca-file: " + roots_error_);
  }
  std::shared_ptr<grpc::Channel> channel;
  {
    std::lock_guard lock(mu_);
    std::shared_ptr<grpc::Channel>& slot = channels_[target->Origin()];
    if (slot == nullptr) {
      std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
      if (target->tls) {
        grpc::SslCredentialsOptions tls;
        tls.pem_root_certs = roots_;
        credentials = grpc::SslCredentials(tls);
      }
      slot = grpc::CreateChannel(target->HostPort(), credentials);
    }
    channel = slot;
  }
  // Everything the call needs lives here until its callback has run.
  struct Exchange {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
  };
  auto exchange = std::make_shared<Exchange>();
  exchange->context.set_deadline(gpr_time_add(
      gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_.count(), GPR_TIMESPAN)));
  for (const auto& [name, value] : headers_) {
    if (!IsGrpcMetadataHeader(name, value)) {
      return NoAnswer(Answer::Delivery::kUnreachable,
                      "--header " + name + ": cannot be sent as gRPC metadata");
    }
    exchange->context.AddMetadata(Lowercase(name), value);
  }
  exchange->context.AddMetadata("dtm-gid", call.gid);
  exchange->context.AddMetadata("dtm-trans_type", std::string(ToString(call.trans_type)));
  exchange->context.AddMetadata("dtm-branch_id", call.branch_id);
  exchange->context.AddMetadata("dtm-op", std::string(ToString(call.op)));
  exchange->context.AddMetadata("dtm-dtm", "settle-check");
  grpc::Slice slice(call.body);
  exchange->request = grpc::ByteBuffer(&slice, 1);
  std::future<grpc::Status> finished = exchange->done.get_future();
  grpc::GenericStub stub(channel);
  stub.UnaryCall(&exchange->context, target->method, grpc::StubOptions(), &exchange->request,
                 &exchange->response,
                 [exchange](grpc::Status s) { exchange->done.set_value(std::move(s)); });
  const grpc::Status status = finished.get();
  switch (status.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return NoAnswer(Answer::Delivery::kNoAnswer, "timed out after " +
                                                       std::to_string(timeout_.count()) +
                                                       " ms waiting for " + target->HostPort());
    case grpc::StatusCode::UNAVAILABLE:
      // gRPC says UNAVAILABLE both when it could not connect and when the method answered so;
      // only a channel that connected is READY (one that failed is in TRANSIENT_FAILURE, or
      // already CONNECTING or IDLE again).
      if (channel->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY) {
        return NoAnswer(Answer::Delivery::kUnreachable,
                        target->HostPort() + ": " + status.error_message());
      }
      break;
    default:
      break;
  }
  Answer answer;
  answer.grpc_code = static_cast<int>(status.error_code());
  answer.body = status.error_message();
  return answer;
}

}  // namespace settle::checker
