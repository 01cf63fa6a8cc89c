#pragma once

#include <string_view>

#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace settle {

// A point in time as a client writes it in a query parameter: RFC 3339
// ("2026-11-22T10:00:00Z", "2026-11-22T10:00:00.123Z", "2026-11-22T11:00:00+01:00"; 't' and
// 'z' in either case; digits past the millisecond are dropped), or a whole number of Unix
// milliseconds ("1795341600000"), as DTM's createTimeStart/createTimeEnd are. Years 1970..9999.
// InvalidArgument (message without a field name) otherwise.
Result<TimePoint> ParseTimeText(std::string_view text);

}  // namespace settle
