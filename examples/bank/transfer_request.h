#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "settle/core/status.h"

namespace settle::bank {

// The largest amount one call may move. Far below int64's range, so that a balance can take
// many credits before the limits in bank_db.h matter.
inline constexpr std::int64_t kMaxAmount = 1'000'000'000'000'000;  // 10^15

// The body of every branch call: {"account_id":"1","amount":30}.
struct TransferRequest {
  std::string account_id;
  std::int64_t amount = 0;
};

// Parses and validates a branch call's body: account_id a non-empty JSON string, amount a JSON
// integer in 1..kMaxAmount (floats, strings and booleans are refused). InvalidArgument naming
// the field ("body" when it is not a JSON object) otherwise.
Result<TransferRequest> ParseTransferRequest(std::string_view body);

}  // namespace settle::bank
