#include "settle/core/grpc_codes.h"

#include <array>
#include <string>

namespace settle {

GrpcCode GrpcCodeOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return GrpcCode::kOk;
    case StatusCode::kInvalidArgument:
      return GrpcCode::kInvalidArgument;
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kConflict:
      return GrpcCode::kAborted;
    case StatusCode::kPending:
      return GrpcCode::kFailedPrecondition;
    case StatusCode::kUnavailable:
      return GrpcCode::kUnavailable;
    case StatusCode::kResourceExhausted:
      return GrpcCode::kResourceExhausted;
    case StatusCode::kInternal:
      break;
  }
  return GrpcCode::kInternal;
}

BranchResult ClassifyGrpcCode(int code) {
  switch (static_cast<GrpcCode>(code)) {
    case GrpcCode::kOk:
      return BranchResult::kSuccess;
    case GrpcCode::kAborted:
      return BranchResult::kFailure;
    case GrpcCode::kFailedPrecondition:
      return BranchResult::kOngoing;
    default:
      return BranchResult::kUnknown;
  }
}

std::string GrpcCodeName(int code) {
  static constexpr std::array<const char*, 17> kNames = {"OK",
                                                         "CANCELLED",
                                                         "UNKNOWN",
                                                         "INVALID_ARGUMENT",
                                                         "DEADLINE_EXCEEDED",
                                                         "NOT_FOUND",
                                                         "ALREADY_EXISTS",
                                                         "PERMISSION_DENIED",
                                                         "RESOURCE_EXHAUSTED",
                                                         "FAILED_PRECONDITION",
                                                         "ABORTED",
                                                         "OUT_OF_RANGE",
                                                         "UNIMPLEMENTED",
                                                         "INTERNAL",
                                                         "UNAVAILABLE",
                                                         "DATA_LOSS",
                                                         "UNAUTHENTICATED"};
  if (code < 0 || code >= static_cast<int>(kNames.size())) return "code " + std::to_string(code);
  return kNames[static_cast<std::size_t>(code)];
}

}  // namespace settle
