#include "settle/app/logging.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "settle/app/background_log_sink.h"

namespace settle::app {

void ConfigureLogging(const std::string& level) {
  auto sink = std::make_shared<BackgroundLogSink>(STDERR_FILENO);
  auto logger = std::make_shared<spdlog::logger>("settled", std::move(sink));
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

void StopLogging() { spdlog::shutdown(); }

}  // namespace settle::app
