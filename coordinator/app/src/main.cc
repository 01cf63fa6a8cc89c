// settled: wiring only. Everything it runs lives in SettledServer.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>

#include "settle/app/command_line.h"
#include "settle/app/descriptor_budget.h"
#include "settle/app/logging.h"
#include "settle/app/settled_server.h"
#include "settle/core/build_info.h"
#include "settle/core/stop_signals.h"
#include "settle/storage/open_store.h"

int main(int argc, char** argv) {
  using namespace settle::app;
  const CommandLine command_line = ParseCommandLine(argc, argv, settle::ThisBuild());
  if (command_line.exit_now) {
    std::fputs(command_line.output.c_str(), command_line.exit_code == 0 ? stdout : stderr);
    return command_line.exit_code;
  }
  settle::BlockStopSignals();  // before any thread starts; awaited below

  ServerConfig config = command_line.config;
  ConfigureLogging(config.log_level);
  if (const settle::Status s = ReserveDescriptors(config, GrpcConnectionCap(config)); !s.ok()) {
    StopLogging();
    std::fprintf(stderr, "%s\n", s.message().c_str());  // as a refused flag is
    return 2;
  }
  settle::SystemClock clock;
  auto server = SettledServer::Start(config, clock);
  if (!server) {
    spdlog::critical("cannot start: {}", server.status().message());
    StopLogging();
    return 1;
  }
  const char* scheme = config.api.tls.enabled() ? "https" : "http";
  spdlog::info("settled listening on {}://{}:{} (store {})", scheme, config.host, (*server)->port(),
               settle::storage::RedactStoreLocation(config.db_path));
  std::printf("settled listening on %s://%s:%d\n", scheme, config.host.c_str(), (*server)->port());
  std::fflush(stdout);

  const int signal_number = settle::WaitForStopSignal();
  spdlog::info("received {}; shutting down", strsignal(signal_number));
  (*server)->Shutdown();
  server->reset();
  StopLogging();
  return 0;
}
