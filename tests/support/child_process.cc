#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace settle::testing {

namespace {

// The test's environment with `added` ("NAME=value" each) in place of the variables of those
// names. The pointers are into `added` and `environ`, which outlive the spawn.
std::vector<char*> EnvironmentWith(const std::vector<std::string>& added) {
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(added.begin(), added.end(), [&](const std::string& a) {
      const std::size_t eq = a.find('=');
      return entry.substr(0, entry.find('=')) == std::string_view(a).substr(0, eq);
    });
    if (!replaced) env.push_back(*e);
  }
  for (const std::string& a : added) env.push_back(const_cast<char*>(a.c_str()));
  env.push_back(nullptr);
  return env;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& stderr_path,
                           const std::vector<std::string>& env) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Nothing else of the test's: its sockets are mostly not close-on-exec (Boost.Asio opens
  // them without it), and a child holding a copy of a participant's listening socket would
  // keep that port accepting (into a backlog nobody reads) after the participant is gone,
  // and keep it from being listened on again.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> child_env = EnvironmentWith(env);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), child_env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0]);
  }
  reader_ = std::thread([this, fd = out[0]] { ReadStdout(fd); });
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (reader_.joinable()) reader_.join();
}

void ChildProcess::ReadStdout(int fd) {
  std::string pending;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::lock_guard lock(mu_);
      lines_.push_back(pending.substr(0, nl));
      pending.erase(0, nl + 1);
      cv_.notify_all();
    }
  }
  close(fd);
  std::lock_guard lock(mu_);
  stdout_closed_ = true;
  cv_.notify_all();
}

std::string ChildProcess::WaitForLine(const std::string& text, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  std::string found;
  cv_.wait_for(lock, timeout, [&] {
    for (const auto& line : lines_) {
      if (line.find(text) != std::string::npos) {
        found = line;
        return true;
      }
    }
    return stdout_closed_;
  });
  return found;
}

void ChildProcess::Signal(int signal_number) {
  if (pid_ > 0) kill(pid_, signal_number);
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      if (reader_.joinable()) reader_.join();
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -1;
}

}  // namespace settle::testing
