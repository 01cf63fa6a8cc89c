#include "settle/core/clock.h"

#include <cstdio>
#include <ctime>

namespace settle {

std::string FormatTime(TimePoint t) {
  const std::int64_t ms = ToUnixMillis(t);
  std::int64_t seconds = ms / 1000;
  std::int64_t millis = ms % 1000;
  if (millis < 0) {
    millis += 1000;
    seconds -= 1;
  }
  const std::time_t tt = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&tt, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis));
  return buf;
}

}  // namespace settle
