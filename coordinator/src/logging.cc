#include "settle/coordinator/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace settle::coordinator {

void ConfigureLogging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("settled");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace settle::coordinator
