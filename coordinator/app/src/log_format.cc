#include "settle/app/log_format.h"

#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <chrono>

#include "settle/app/log_fields.h"
#include "settle/core/clock.h"

namespace settle::app {
namespace {

// "2026-11-28T10:12:24.601Z", as the API writes times.
std::string UtcTime(spdlog::log_clock::time_point at) {
  return FormatTime(std::chrono::time_point_cast<Duration>(at));
}

bool IsReserved(const std::string& key) {
  return key == "time" || key == "level" || key == "message";
}

// A value written without quotes that is a whole number, as a JSON number.
nlohmann::ordered_json ValueOf(const LogField& field) {
  if (!field.quoted && !field.value.empty() && field.value.size() <= 18) {
    long long number = 0;
    const char* end = field.value.data() + field.value.size();
    const auto [at, ec] = std::from_chars(field.value.data(), end, number);
    if (ec == std::errc() && at == end && (field.value[0] != '0' || field.value.size() == 1)) {
      return number;
    }
  }
  return field.value;
}

class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view message(msg.payload.data(), msg.payload.size());
    nlohmann::ordered_json line;
    line["time"] = UtcTime(msg.time);
    const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
    line["level"] = std::string_view(level.data(), level.size());
    line["message"] = message;
    for (LogField& field : ParseLogFields(message)) {
      if (IsReserved(field.key)) continue;
      line[field.key] = ValueOf(field);
    }
    // Bytes that are not UTF-8 (a library's text) are replaced, never a line lost.
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonLogFormatter>();
  }
};

}  // namespace

std::optional<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return std::nullopt;
}

std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format) {
  if (format == LogFormat::kJson) return std::make_unique<JsonLogFormatter>();
  return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                                                     spdlog::pattern_time_type::utc);
}

}  // namespace settle::app
