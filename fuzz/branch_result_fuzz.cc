// ClassifyBranchResponse: how the coordinator reads a participant's answer (docs/protocol.md §4.2).
// The classification is checked against the protocol's rules, written out independently, and
// against what they imply: more body text can only make an answer more definite.
//
// Input: [status high] [status low] body...  The status is a signed 16-bit number, so that
// odd codes (0, negative, over 999) are tried as well as real ones.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "settle/core/branch_result.h"

namespace settle::fuzz {
namespace {

bool Contains(std::string_view body, std::string_view word) {
  return body.find(word) != std::string_view::npos;
}

// docs/protocol.md §4.2, in its order.
BranchResult Expected(int status, std::string_view body) {
  if (status == 425 || Contains(body, "ONGOING")) return BranchResult::kOngoing;
  if (status == 409 || Contains(body, "FAILURE")) return BranchResult::kFailure;
  if (status == 200) return BranchResult::kSuccess;
  return BranchResult::kUnknown;
}

}  // namespace
}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle;
  using namespace settle::fuzz;
  Input input(data, size);
  const auto high = input.Byte();
  const auto low = input.Byte();
  const int status = static_cast<std::int16_t>(static_cast<std::uint16_t>(high << 8 | low));
  const std::string_view body = input.rest();

  const BranchResult result = ClassifyBranchResponse(status, body);
  FUZZ_CHECK(result == Expected(status, body));
  const std::string_view name = ToString(result);
  FUZZ_CHECK(name == "SUCCESS" || name == "FAILURE" || name == "ONGOING" || name == "UNKNOWN");

  // SUCCESS needs a 200; a 200 is never UNKNOWN.
  if (result == BranchResult::kSuccess) FUZZ_CHECK(status == 200);
  if (status == 200) FUZZ_CHECK(result != BranchResult::kUnknown);

  // Wrapping the body in more text (a JSON envelope, say) never makes the answer less
  // definite: ONGOING stays ONGOING, FAILURE stays FAILURE or turns ONGOING.
  const std::string wrapped = "{\"x\":\"" + std::string(body) + "\"}";
  const BranchResult again = ClassifyBranchResponse(status, wrapped);
  if (result == BranchResult::kOngoing) FUZZ_CHECK(again == BranchResult::kOngoing);
  if (result == BranchResult::kFailure) {
    FUZZ_CHECK(again == BranchResult::kFailure || again == BranchResult::kOngoing);
  }
  return 0;
}
