#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace settle::testing {

// A real child process: its stdout is captured line by line, its stderr goes to a file.
// The destructor kills it (SIGKILL) if it still runs.
class ChildProcess {
 public:
  // The child gets the test's environment, with each "NAME=value" of `env` added (replacing a
  // variable of that name).
  ChildProcess(const std::vector<std::string>& argv, const std::string& stderr_path,
               const std::vector<std::string>& env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Waits until a stdout line contains `text`; returns that line, or "" on timeout or exit.
  std::string WaitForLine(const std::string& text, std::chrono::milliseconds timeout);

  void Signal(int signal_number);
  // Waits for the process to end; returns its exit status as waitpid reports it (-1 on
  // timeout, and the process is then killed).
  int Wait(std::chrono::milliseconds timeout);
  bool running() const { return pid_ > 0; }

 private:
  void ReadStdout(int fd);

  pid_t pid_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
  bool stdout_closed_ = false;
};

}  // namespace settle::testing
