#include "settle/grpc_unary/call_signing.h"

#include <string>
#include <utility>
#include <vector>

#include "settle/signing/grpc_call_signature.h"

namespace settle::grpc_unary {

Status SignUnary(UnaryRequest& request, const GrpcTarget& target, const signing::SigningKey& key,
                 std::int64_t created_unix, bool cover_authority, std::string_view tag) {
  // A branch header of a signature's name would be joined to the signature's own value.
  std::erase_if(request.metadata, [](const auto& entry) {
    return entry.first == "content-digest" || entry.first == "signature-input" ||
           entry.first == "signature";
  });
  Result<std::vector<std::pair<std::string, std::string>>> added =
      signing::SignGrpcCall({.authority = target.HostPort(),
                             .method = request.method,
                             .metadata = request.metadata,
                             .message = request.message},
                            key, created_unix, cover_authority, tag);
  if (!added) return added.status();
  request.metadata.insert(request.metadata.end(), added->begin(), added->end());
  return Status::Ok();
}

}  // namespace settle::grpc_unary
