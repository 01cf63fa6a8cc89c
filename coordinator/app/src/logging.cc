#include "settle/app/logging.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "settle/app/background_log_sink.h"
#include "settle/app/grpc_log.h"
#include "settle/app/log_format.h"

namespace settle::app {

void ConfigureLogging(const std::string& level, const std::string& format) {
  auto sink = std::make_shared<BackgroundLogSink>(STDERR_FILENO);
  auto logger = std::make_shared<spdlog::logger>("settled", std::move(sink));
  logger->set_formatter(MakeLogFormatter(ParseLogFormat(format).value_or(LogFormat::kText)));
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  RouteGrpcLogs();
}

void StopLogging() { spdlog::shutdown(); }

}  // namespace settle::app
