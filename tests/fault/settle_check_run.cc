#include "settle_check_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "file_text.h"
#include "temp_dir.h"

extern char** environ;

namespace settle::testing {

std::string CheckRun::Line(const std::string& name) const {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto two_spaces = line.find("  ");
    if (two_spaces != std::string::npos &&
        line.compare(two_spaces + 2, name.size() + 1, name + ":") == 0) {
      return line;
    }
  }
  return {};
}

std::string CheckRun::Verdict(const std::string& name) const {
  const std::string line = Line(name);
  return line.substr(0, line.find("  "));
}

CheckRun RunSettleCheck(const std::vector<std::string>& args) {
  TempDir dir;
  const std::string out_path = dir.File("out");
  const std::string err_path = dir.File("err");
  std::vector<std::string> argv = {SETTLE_CHECK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);

  CheckRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(out_path);
  run.err = ReadFile(err_path);
  return run;
}

}  // namespace settle::testing
