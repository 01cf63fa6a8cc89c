// settled: wiring only. Everything it runs lives in SettledServer.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>

#include "settle/coordinator/command_line.h"
#include "settle/coordinator/logging.h"
#include "settle/coordinator/settled_server.h"

int main(int argc, char** argv) {
  using namespace settle::coordinator;
  const CommandLine command_line = ParseCommandLine(argc, argv);
  if (command_line.exit_now) {
    std::fputs(command_line.output.c_str(), command_line.exit_code == 0 ? stdout : stderr);
    return command_line.exit_code;
  }
  // Block the stop signals in every thread (threads inherit the mask) and wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const ServerConfig& config = command_line.config;
  ConfigureLogging(config.log_level);
  settle::SystemClock clock;
  auto server = SettledServer::Start(config, clock);
  if (!server) {
    spdlog::critical("cannot start: {}", server.status().message());
    return 1;
  }
  spdlog::info("settled listening on http://{}:{} (database {})", config.host, (*server)->port(),
               config.db_path);
  std::printf("settled listening on http://%s:%d\n", config.host.c_str(), (*server)->port());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("received {}; shutting down", strsignal(signal_number));
  (*server)->Shutdown();
  return 0;
}
