#pragma once

#include <string_view>

#include "settle/core/branch_result.h"
#include "settle/core/status.h"

namespace settle {

// gRPC's status codes, the numbers every gRPC implementation uses on the wire.
enum class GrpcCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// The one place where the protocol's outcomes meet gRPC's codes (docs/protocol.md §10.3,
// §10.4), as ToHttpAnswer is for HTTP: settled's gRPC API answers with it and the SDK's gRPC
// branches reply with it:
//   OK                                  OK
//   InvalidArgument                     INVALID_ARGUMENT
//   NotFound, AlreadyExists, Conflict   ABORTED (DTM's FAILURE)
//   Pending                             FAILED_PRECONDITION (DTM's ONGOING)
//   Unavailable                         UNAVAILABLE
//   Internal                            INTERNAL
GrpcCode GrpcCodeOf(StatusCode code);

// How the coordinator reads a gRPC participant's answer, as DTM does: OK is SUCCESS, ABORTED
// FAILURE, FAILED_PRECONDITION ONGOING, any other code an error (UNKNOWN, retried).
BranchResult ClassifyGrpcCode(int code);

// "ABORTED", "UNAVAILABLE", ...; "code N" for a number gRPC does not define.
std::string GrpcCodeName(int code);

}  // namespace settle
