#include "settled_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "file_text.h"

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

int UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

SettledWithGrpc::SettledWithGrpc(const std::string& store, std::vector<std::string> extra_args,
                                 const std::string& log_stem) {
  std::string why;
  for (int attempt = 1; attempt <= 3 && process == nullptr; ++attempt) {
    grpc_port = UnusedPort();
    if (grpc_port == 0) continue;
    std::vector<std::string> args = {"--grpc-port", std::to_string(grpc_port)};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const std::string log = log_stem + "-" + std::to_string(attempt) + ".log";
    try {
      process = std::make_unique<SettledProcess>(store, args, 0, log);
    } catch (const std::runtime_error&) {
      why += "\n" + ReadFile(log);
    }
  }
  if (process == nullptr) {
    throw std::runtime_error("settled did not start with a gRPC port in 3 attempts:" + why);
  }
  if (!WaitForFileToContain(process->log_path(),
                            "gRPC API (dtmgimp.Dtm) listening on " + GrpcAddress(),
                            std::chrono::steady_clock::now() + std::chrono::seconds(20))) {
    throw std::runtime_error("settled's gRPC API did not say it listens on " + GrpcAddress());
  }
}

}  // namespace settle::testing
