#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace settle::testing {

// Collects what this process logs through spdlog's default logger while it lives (the last
// `capacity` lines), then puts the previous logger back. One at a time.
class LogCapture {
 public:
  explicit LogCapture(std::size_t capacity = 10'000)
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(capacity)),
        previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> Lines() const { return sink_->last_formatted(); }
  std::string Text() const {
    std::string text;
    for (const std::string& line : Lines()) text += line;
    return text;
  }
  // The lines that contain `text`.
  std::vector<std::string> LinesWith(std::string_view text) const {
    std::vector<std::string> found;
    for (std::string& line : Lines()) {
      if (line.find(text) != std::string::npos) found.push_back(std::move(line));
    }
    return found;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace settle::testing
