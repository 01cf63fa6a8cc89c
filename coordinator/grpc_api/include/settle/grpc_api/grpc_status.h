#pragma once

#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

#include "settle/core/status.h"

// The one place where a Status becomes a gRPC status, for settled's gRPC API as DTM's clients
// read it (docs/protocol.md §10.3):
//
//   OK                                  OK
//   InvalidArgument                     INVALID_ARGUMENT, the field in the proto's names
//   NotFound, AlreadyExists, Conflict   ABORTED (DTM's FAILURE)
//   Pending                             FAILED_PRECONDITION (DTM's ONGOING)
//   Unavailable                         UNAVAILABLE
//   Internal and anything else          INTERNAL
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
