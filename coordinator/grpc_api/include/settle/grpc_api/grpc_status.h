#pragma once

#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

#include "settle/core/status.h"

// A Status as settled's gRPC API answers it (docs/protocol.md §10.3): the code from the one
// mapping of settle/core/grpc_codes.h (ABORTED for FAILURE, FAILED_PRECONDITION for ONGOING,
// ...), and for INVALID_ARGUMENT the field in the proto's names.
namespace settle::grpc_api {

// `url_name`: what the engine's "url" is in this request: an XA branch's "Data.url", a topic
// request's "URL".
grpc::Status ToGrpcStatus(const Status& status, std::string_view url_name = "Data.url");

// The engine names a field by its path in the protocol's JSON names, up to the first ": "
// ("payloads[1]: ...", "retry_limit: ..."); over gRPC the same field has the proto's name
// ("BinPayloads[1]: ...", "TransOptions.RetryLimit: ..."). Messages that name no field are
// returned unchanged.
std::string InProtoNames(std::string_view message, std::string_view url_name = "Data.url");

}  // namespace settle::grpc_api
