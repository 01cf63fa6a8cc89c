#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"

namespace settle::testing {

// The real settled binary, started on 127.0.0.1 with a kernel-chosen port and the given store
// (an SQLite file or a postgresql:// URL). Its log goes to `log_path`, by default
// "<store>.log" (which suits a file).
class SettledProcess {
 public:
  // Starts and waits until it listens; the test fails (throws) if it does not. Port 0 lets
  // the kernel choose; a restart can then pass the port it got, as an operator would. `env`
  // ("NAME=value" each) is added to the test's environment for it (LD_PRELOAD, say).
  SettledProcess(const std::string& store, std::vector<std::string> extra_args = {}, int port = 0,
                 std::string log_path = "", std::vector<std::string> env = {});

  int port() const { return port_; }
  ChildProcess& process() { return *process_; }
  std::string log_path() const { return log_path_; }

  void Kill();      // SIGKILL, and waits for it to be gone
  int Terminate();  // SIGTERM; returns the exit status (-1 on timeout)

  static std::string BinaryPath();

 private:
  std::unique_ptr<ChildProcess> process_;
  std::string log_path_;
  int port_ = 0;
};

// A port of 127.0.0.1 that nothing listens on just now: bound by the kernel's choice, then
// closed. Another process may take it before the test's does (StartSettledWithGrpc retries).
int UnusedPort();

// The real settled with its gRPC API on a port of its own (settled's --grpc-port 0 turns the
// API off), as an operator runs it: an unused port is chosen, and when another process takes it
// before settled binds it (settled then exits at start) another is tried, three times at most.
// Logs go to "<log_stem>-<attempt>.log". Waits until settled says its gRPC API listens there.
// The test fails (throws) when settled does not start.
struct SettledWithGrpc {
  SettledWithGrpc(const std::string& store, std::vector<std::string> extra_args,
                  const std::string& log_stem);
  std::string GrpcAddress() const { return "127.0.0.1:" + std::to_string(grpc_port); }

  std::unique_ptr<SettledProcess> process;
  int grpc_port = 0;
};

}  // namespace settle::testing
