#include "settle/calls/try_countersigner.h"

#include <string_view>

#include "settle/core/grpc_target.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/net/client.h"
#include "settle/net/request_signing.h"
#include "settle/signing/request_signature.h"

namespace settle::calls {

TryCountersigner::TryCountersigner(const Clock& clock, signing::SigningKey key, bool sign_authority)
    : clock_(clock), key_(std::move(key)), sign_authority_(sign_authority) {}

Result<TrySignature> TryCountersigner::Countersign(const RegisteredTry& registered) const {
  const std::int64_t now = ToUnixMillis(clock_.Now()) / 1000;
  const std::string_view trans_type = ToString(TransType::kTcc);
  const std::string_view op = ToString(BranchOp::kTry);
  if (LooksLikeGrpcTarget(registered.try_url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(registered.try_url);
    if (!target) return Status::InvalidArgument("try: " + target.status().message());
    grpc_unary::UnaryRequest request{.method = target->method, .message = registered.data};
    grpc_unary::AddBranchMetadata(request.metadata, {.gid = registered.gid,
                                                     .trans_type = std::string(trans_type),
                                                     .branch_id = registered.branch_id,
                                                     .op = std::string(op)});
    // The four words alone: the initiator has no coordinator address to tell its participant.
    std::erase_if(request.metadata, [](const auto& m) { return m.first == "dtm-dtm"; });
    if (Status s = grpc_unary::SignUnary(request, *target, key_, now, sign_authority_,
                                         signing::kRegisteredTryTag);
        !s.ok()) {
      return s;
    }
    TrySignature fields;
    for (auto& [name, value] : request.metadata) {
      if (name == "content-digest" || name == "signature-input" || name == "signature") {
        fields.emplace_back(std::move(name), std::move(value));
      }
    }
    return fields;
  }
  Result<Url> url = ParseUrl(registered.try_url);
  if (!url) return Status::InvalidArgument("try: " + url.status().message());
  net::ClientRequest request;
  request.method = registered.data.empty() ? "GET" : "POST";
  request.target = url->TargetWith({{"gid", registered.gid},
                                    {"trans_type", trans_type},
                                    {"branch_id", registered.branch_id},
                                    {"op", op}});
  request.url = std::move(*url);
  request.body = registered.data;
  if (Status s = net::SignRequest(request, key_, now, sign_authority_, signing::kRegisteredTryTag);
      !s.ok()) {
    return s;
  }
  return TrySignature(request.headers.begin(), request.headers.end());
}

}  // namespace settle::calls
