#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"
#include "settle/storage/records.h"

namespace settle::storage {

// A branch's failed attempts as the text stored in trans_branch_op.failed_attempts: '' for
// none (every branch that succeeds at once, so the common path encodes nothing), otherwise
// a JSON array of [unix_millis, "error"] pairs, oldest first. Invalid UTF-8 in an error is
// replaced, never refused: the history is for reading.
std::string EncodeFailedAttempts(const std::vector<FailedAttempt>& attempts);

// Internal, describing what is wrong, if `text` is not such an encoding; never throws.
Result<std::vector<FailedAttempt>> DecodeFailedAttempts(std::string_view text);

}  // namespace settle::storage
