#include "settled_process.h"

#include <signal.h>

#include <algorithm>
#include <stdexcept>

namespace settle::testing {

std::string SettledProcess::BinaryPath() { return SETTLED_BINARY; }

SettledProcess::SettledProcess(const std::string& store, std::vector<std::string> extra_args,
                               int port, std::string log_path, std::vector<std::string> env)
    : log_path_(log_path.empty() ? store + ".log" : std::move(log_path)) {
  std::vector<std::string> argv = {BinaryPath(),         "--host",  "127.0.0.1", "--port",
                                   std::to_string(port), "--store", store};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  // Tests run side by side: the gRPC API's fixed default port is off unless a test asks.
  if (std::find(extra_args.begin(), extra_args.end(), "--grpc-port") == extra_args.end()) {
    argv.insert(argv.end(), {"--grpc-port", "0"});
  }
  process_ = std::make_unique<ChildProcess>(argv, log_path_, env);
  const std::string line = process_->WaitForLine("settled listening on", std::chrono::seconds(20));
  const std::size_t colon = line.rfind(':');
  if (line.empty() || colon == std::string::npos) {
    throw std::runtime_error("settled did not start; see " + log_path_);
  }
  port_ = std::stoi(line.substr(colon + 1));
}

void SettledProcess::Kill() {
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(10));
}

int SettledProcess::Terminate() {
  process_->Signal(SIGTERM);
  return process_->Wait(std::chrono::seconds(30));
}

}  // namespace settle::testing
