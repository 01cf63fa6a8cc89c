#include "settle/core/time_text.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>

namespace settle {
namespace {

// The number in text[at, at + n) of exactly n digits.
std::optional<int> Digits(std::string_view text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

Status Invalid() {
  return Status::InvalidArgument(
      "expected RFC 3339 (2026-11-22T10:00:00Z) or Unix milliseconds (1795341600000)");
}

Result<TimePoint> ParseUnixMillis(std::string_view text) {
  std::int64_t ms = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  // Up to year 9999, as RFC 3339's form allows.
  constexpr std::int64_t kMax = 253'402'300'799'999;
  if (ec != std::errc() || end != text.data() + text.size() || ms < 0 || ms > kMax) {
    return Invalid();
  }
  return FromUnixMillis(ms);
}

Result<TimePoint> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS, then an optional fraction, then Z or +HH:MM / -HH:MM.
  const auto year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  const auto hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':') {
    return Invalid();
  }
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  // Second 60 is a leap second; it is taken as the next one.
  if (*year < 1970 || !date.ok() || *hour > 23 || *minute > 59 || *second > 60) return Invalid();
  std::size_t at = 19;
  std::int64_t millis = 0;
  if (at < text.size() && text[at] == '.') {
    std::size_t digits = 0;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, ++digits) {
      if (digits < 3) millis = millis * 10 + (text[at] - '0');
    }
    if (digits == 0) return Invalid();
    for (; digits < 3; ++digits) millis *= 10;
  }
  std::int64_t offset_minutes = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const auto oh = Digits(text, at + 1, 2), om = Digits(text, at + 4, 2);
    if (!oh || !om || text[at + 3] != ':' || *oh > 23 || *om > 59) return Invalid();
    offset_minutes = (*oh * 60 + *om) * (text[at] == '-' ? -1 : 1);
    at += 6;
  } else {
    return Invalid();
  }
  if (at != text.size()) return Invalid();
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const std::int64_t seconds =
      days * 86'400 + *hour * 3'600 + *minute * 60 + *second - offset_minutes * 60;
  if (seconds < 0) return Invalid();
  return FromUnixMillis(seconds * 1000 + millis);
}

}  // namespace

Result<TimePoint> ParseTimeText(std::string_view text) {
  if (text.empty() || text.size() > 64) return Invalid();
  const bool all_digits = text.find_first_not_of("0123456789") == std::string_view::npos;
  return all_digits ? ParseUnixMillis(text) : ParseRfc3339(text);
}

}  // namespace settle
