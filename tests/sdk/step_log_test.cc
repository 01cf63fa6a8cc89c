// The step log a workflow run replays (settle/sdk/step_log.h): what it reads, and what it
// refuses to hand back.
#include "settle/sdk/step_log.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace settle::sdk {
namespace {

TEST_CASE("a step's record holds its name and its bytes, binary included", "[sdk][workflow]") {
  const std::string bytes("a\0b\xff", 4);
  CHECK(StepRecordData("reserve", bytes) == "reserve:YQBi/w==");
  auto log = StepLog::From({{"01", "action", "succeed", StepRecordData("reserve", bytes)},
                            {"02", "action", "failed", StepRecordData("charge", "no funds")},
                            {"01", "rollback", "succeed", StepRecordData("reserve", "")}});
  REQUIRE(log);
  CHECK(log->size() == 3);
  auto reserve = log->Find("01", BranchOp::kAction, "reserve");
  REQUIRE(reserve);
  REQUIRE(reserve->has_value());
  CHECK((*reserve)->bytes == bytes);
  CHECK((*reserve)->status == BranchStatus::kSucceed);
  auto charge = log->Find("02", BranchOp::kAction, "charge");
  REQUIRE(charge);
  CHECK((*charge)->status == BranchStatus::kFailed);
  CHECK((*charge)->bytes == "no funds");
  auto later = log->Find("03", BranchOp::kAction, "ship");
  REQUIRE(later);
  CHECK_FALSE(later->has_value());
  CHECK(log->Find("01", BranchOp::kCommit, "reserve")->has_value() == false);
}

TEST_CASE("a step asked for where the log records another is an error, never another's result",
          "[sdk][workflow]") {
  auto log = StepLog::From({{"01", "action", "succeed", StepRecordData("reserve", "r1")}});
  REQUIRE(log);
  auto swapped = log->Find("01", BranchOp::kAction, "charge");
  REQUIRE_FALSE(swapped);
  CHECK(swapped.status().code() == StatusCode::kInternal);
  CHECK_THAT(swapped.status().message(),
             Catch::Contains("recorded as \"reserve\"") && Catch::Contains("\"charge\""));
}

TEST_CASE("a log this SDK did not write is refused, naming the record", "[sdk][workflow]") {
  for (const StepProgress& p :
       std::vector<StepProgress>{{"01", "action", "succeed", "raw output of another client"},
                                 {"01", "action", "succeed", "reserve:not base64!"},
                                 {"01", "action", "succeed", "bad name:YQ=="},
                                 {"01", "fly", "succeed", "reserve:YQ=="},
                                 {"01", "action", "prepared", "reserve:YQ=="}}) {
    INFO(p.op << " " << p.status << " " << p.data);
    auto log = StepLog::From({p});
    REQUIRE_FALSE(log);
    CHECK(log.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(log.status().message(), Catch::StartsWith("step log: branch 01 "));
  }
  CHECK(IsValidStepName("reserve-stock.v2"));
  CHECK_FALSE(IsValidStepName(""));
  CHECK_FALSE(IsValidStepName(std::string(65, 'a')));
  CHECK_FALSE(IsValidStepName("a:b"));
}

}  // namespace
}  // namespace settle::sdk
