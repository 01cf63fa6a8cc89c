// The one mapping between the protocol's outcomes and gRPC's codes (grpc_codes.h).
#include "settle/core/grpc_codes.h"

#include <catch2/catch.hpp>

namespace settle {
namespace {

TEST_CASE("a Status answers with DTM's codes: FAILURE is ABORTED, ONGOING FAILED_PRECONDITION",
          "[grpc_codes]") {
  CHECK(GrpcCodeOf(StatusCode::kOk) == GrpcCode::kOk);
  CHECK(GrpcCodeOf(StatusCode::kInvalidArgument) == GrpcCode::kInvalidArgument);
  CHECK(GrpcCodeOf(StatusCode::kConflict) == GrpcCode::kAborted);
  CHECK(GrpcCodeOf(StatusCode::kNotFound) == GrpcCode::kAborted);
  CHECK(GrpcCodeOf(StatusCode::kAlreadyExists) == GrpcCode::kAborted);
  CHECK(GrpcCodeOf(StatusCode::kPending) == GrpcCode::kFailedPrecondition);
  CHECK(GrpcCodeOf(StatusCode::kUnavailable) == GrpcCode::kUnavailable);
  CHECK(GrpcCodeOf(StatusCode::kInternal) == GrpcCode::kInternal);
}

TEST_CASE("a participant's code is read as DTM reads it, anything unexpected is an error",
          "[grpc_codes]") {
  CHECK(ClassifyGrpcCode(0) == BranchResult::kSuccess);
  CHECK(ClassifyGrpcCode(10) == BranchResult::kFailure);
  CHECK(ClassifyGrpcCode(9) == BranchResult::kOngoing);
  for (int code : {1, 2, 3, 4, 5, 12, 13, 14, 16, 17, -1, 1000}) {
    INFO(code);
    CHECK(ClassifyGrpcCode(code) == BranchResult::kUnknown);
  }
  CHECK(GrpcCodeName(10) == "ABORTED");
  CHECK(GrpcCodeName(16) == "UNAUTHENTICATED");
  CHECK(GrpcCodeName(99) == "code 99");
}

}  // namespace
}  // namespace settle
