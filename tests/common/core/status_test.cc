#include "settle/core/status.h"

#include <catch2/catch.hpp>

namespace settle {
namespace {

Result<int> Half(int n) {
  if (n % 2 != 0) return Status::InvalidArgument("n: must be even");
  return n / 2;
}

TEST_CASE("an OK status has no message and says OK", "[common]") {
  Status s;
  CHECK(s.ok());
  CHECK(s.ToString() == "OK");
}

TEST_CASE("a failed status carries its code and message", "[common]") {
  Status s = Status::Conflict("gid g1 is aborting");
  CHECK_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kConflict);
  CHECK(s.ToString() == "Conflict: gid g1 is aborting");
}

TEST_CASE("a Result holds either a value or the status explaining its absence", "[common]") {
  Result<int> good = Half(8);
  REQUIRE(good);
  CHECK(*good == 4);

  Result<int> bad = Half(3);
  REQUIRE_FALSE(bad);
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message() == "n: must be even");
}

}  // namespace
}  // namespace settle
