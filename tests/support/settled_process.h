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

}  // namespace settle::testing
