#pragma once

#include <string>
#include <string_view>

#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace settle {

// "250ms", "3s", "2m", "1h", "7d", or a bare number of seconds ("30"). Whole numbers only,
// non-negative, at most ten years. InvalidArgument (message without a field name) otherwise.
Result<Duration> ParseDuration(std::string_view text);

// The shortest exact spelling: 1500 ms -> "1500ms", 60000 ms -> "1m".
std::string FormatDuration(Duration d);

}  // namespace settle
