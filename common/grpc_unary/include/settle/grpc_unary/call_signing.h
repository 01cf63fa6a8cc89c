#pragma once

#include <cstdint>
#include <string_view>

#include "settle/core/grpc_target.h"
#include "settle/core/status.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/signing/keys.h"

namespace settle::grpc_unary {

// Signs `request` as it will go to `target` (the gRPC form of docs/protocol.md §4.9,
// signing::SignGrpcCall): its method, the authority its channel carries (target.HostPort(),
// what ChannelPool dials), every dtm-* key of its metadata and its message's digest. Adds
// content-digest, signature-input and signature, replacing metadata of those names. Without
// `cover_authority` the signature leaves the authority out. InvalidArgument when a dtm-* value
// cannot be signed. The one place a gRPC branch call is signed: settled, the SDK's gRPC client
// and settle-check call it.
// A `tag` says what the signature is for (signing::kRegisteredTryTag; empty: none).
Status SignUnary(UnaryRequest& request, const GrpcTarget& target, const signing::SigningKey& key,
                 std::int64_t created_unix, bool cover_authority = true, std::string_view tag = {});

}  // namespace settle::grpc_unary
