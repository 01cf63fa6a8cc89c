#include "not_sent.h"

#include "settle/core/grpc_target.h"
#include "settle/core/protocol_keys.h"

namespace settle::calls {

std::string WhyNotSent(const engine::BranchCall& call) {
  if (LooksLikeGrpcTarget(call.url)) {
    for (const auto& [name, value] : call.headers) {
      if (!IsGrpcMetadataHeader(name, value)) {
        return "branch header " + name + " cannot be sent as gRPC metadata";
      }
      if (IsReservedGrpcBranchHeader(name)) {
        return "not sent: branch header " + name + " is metadata gRPC or settled sets itself";
      }
    }
    return "";
  }
  if (const auto key = ProtocolKeyInQuery(call.url)) {
    return "not sent: the branch URL's query names \"" + std::string(*key) +
           "\", which settled sets itself";
  }
  for (const auto& [name, value] : call.headers) {
    if (IsReservedBranchHeader(name)) {
      return "not sent: branch header " + name + " is one settled sets itself";
    }
  }
  return "";
}

}  // namespace settle::calls
