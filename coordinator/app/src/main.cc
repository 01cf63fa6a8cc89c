// settled: wiring only. Everything it runs lives in SettledServer.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "settle/app/command_line.h"
#include "settle/app/descriptor_budget.h"
#include "settle/app/logging.h"
#include "settle/app/settled_server.h"
#include "settle/core/build_info.h"
#include "settle/core/stop_signals.h"
#include "settle/storage/open_store.h"

namespace {

// Blocks of 64 KiB or more (request and branch bodies, loaded transactions, answers) are mapped
// on their own and unmapped when freed. glibc otherwise raises that threshold to the largest
// block freed so far (up to 32 MiB) and keeps such blocks in its arenas when they are freed, where
// malloc_trim does not reach the top of a thread's arena: three readers of a 200 MB transaction
// left settled at 400 MB for good (docs/operations.md, "Hostile clients").
void MapLargeBlocksOnTheirOwn() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
}

// 1 for what may pass by itself (a database not reachable yet, a port or a lock an instance
// that is stopping still holds, a bug); 2, as for a refused flag, for what only the operator
// can mend: a file or setting settled cannot use, a damaged database.
int StartFailureExitCode(const settle::Status& status) {
  switch (status.code()) {
    case settle::StatusCode::kUnavailable:
    case settle::StatusCode::kInternal:
      return 1;
    default:
      return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace settle::app;
  MapLargeBlocksOnTheirOwn();
  const CommandLine command_line = ParseCommandLine(argc, argv, settle::ThisBuild());
  if (command_line.exit_now) {
    std::fputs(command_line.output.c_str(), command_line.exit_code == 0 ? stdout : stderr);
    return command_line.exit_code;
  }
  settle::BlockStopSignals();  // before any thread starts; awaited below

  ServerConfig config = command_line.config;
  ConfigureLogging(config.log_level, config.log_format);
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
    return StartFailureExitCode(server.status());
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
