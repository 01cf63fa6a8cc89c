// xa-transfer: moves money from an account at one xa-bank to an account at another as one XA
// transaction: the debit and the credit are each prepared in their bank's PostgreSQL database,
// then Settle commits both (submit), or rolls both back when a bank refused (abort).
// Exit code: 0 when the transfer is committed (succeed, or submitted: the coordinator is
// still delivering the commits), 1 when it was rolled back, 2 for anything else.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>

#include "settle/sdk/client.h"
#include "settle/sdk/xa.h"

namespace {

struct Args {
  std::string coordinator = "http://127.0.0.1:36789/api/settle";
  std::string from_bank;
  std::string to_bank;
  std::string from;
  std::string to;
  long long amount = 0;
  bool pause = false;
  int timeout_to_fail = 0;
};

std::string Body(const std::string& account, long long amount) {
  return R"({"account_id":")" + account + R"(","amount":)" + std::to_string(amount) + "}";
}

// Blocks until SIGUSR1 arrives or, on a terminal, Enter is pressed. SIGUSR1 must be blocked
// in every thread (main blocks it first).
void WaitToSubmit() {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  const int signal_fd = signalfd(-1, &usr1, SFD_CLOEXEC);
  pollfd fds[2] = {{signal_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
  const nfds_t watched = isatty(STDIN_FILENO) ? 2 : 1;
  while (poll(fds, watched, -1) < 0 && errno == EINTR) {
  }
  close(signal_fd);
  // Enter: read the line, so that the shell does not get it.
  char line[256];
  if (fds[1].revents != 0 && std::fgets(line, sizeof line, stdin) == nullptr) clearerr(stdin);
}

// How a branch call that did not prepare ended; the final status line says why.
const char* Failed(const settle::Status& s) {
  return s.code() == settle::StatusCode::kConflict ? "refused" : "failed";
}

// The XA transaction: each CallBranch has its bank prepare the change in its database and
// register the branch; an error (a bank answering FAILURE) makes RunXa abort.
settle::Status Transfer(settle::sdk::Xa& xa, const Args& a) {
  auto out = xa.CallBranch(Body(a.from, a.amount), a.from_bank + "/api/TransOutXa");
  if (!out) {
    std::printf("branch 01 (debit %s) %s\n", a.from.c_str(), Failed(out.status()));
    return out.status();
  }
  std::printf("branch 01 prepared: debit %lld from %s at %s\n", a.amount, a.from.c_str(),
              a.from_bank.c_str());
  auto in = xa.CallBranch(Body(a.to, a.amount), a.to_bank + "/api/TransInXa");
  if (!in) {
    std::printf("branch 02 (credit %s) %s\n", a.to.c_str(), Failed(in.status()));
    return in.status();
  }
  std::printf("branch 02 prepared: credit %lld to %s at %s\n", a.amount, a.to.c_str(),
              a.to_bank.c_str());
  if (a.pause) {
    std::printf("both branches prepared; press Enter or run `kill -USR1 %d` to submit\n",
                static_cast<int>(getpid()));
    std::fflush(stdout);
    WaitToSubmit();
  }
  std::fflush(stdout);
  return settle::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"xa-transfer: moves money between two xa-banks as one XA transaction"};
  app.add_option("--coordinator", a.coordinator, "Settle's API base")->capture_default_str();
  app.add_option("--from-bank", a.from_bank, "URL of the bank paying, e.g. http://127.0.0.1:8081")
      ->required();
  app.add_option("--to-bank", a.to_bank, "URL of the bank receiving")->required();
  app.add_option("--from", a.from, "Account paying")->required();
  app.add_option("--to", a.to, "Account receiving")->required();
  app.add_option("--amount", a.amount, "Amount, a positive integer")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_flag("--pause", a.pause,
               "Once both branches are prepared, wait for Enter (or SIGUSR1) before submitting");
  app.add_option("--timeout-to-fail", a.timeout_to_fail,
                 "Seconds after which the coordinator aborts the transaction if it was not "
                 "submitted (0: its default)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  for (std::string* bank : {&a.from_bank, &a.to_bank}) {
    while (!bank->empty() && bank->back() == '/') bank->pop_back();
  }

  // Before any thread starts, so that only WaitToSubmit receives it.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);

  auto client = settle::sdk::Client::Create(a.coordinator);
  if (!client) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 2;
  auto gid = (*client)->NewGid();
  if (!gid) return std::fprintf(stderr, "%s\n", gid.status().ToString().c_str()), 2;
  std::printf("gid %s\n", gid->c_str());
  std::fflush(stdout);

  settle::sdk::TransOptions options;
  options.wait_result = true;  // answer once the commits (or rollbacks) are delivered
  if (a.timeout_to_fail > 0) options.timeout_to_fail = std::chrono::seconds(a.timeout_to_fail);
  auto outcome = settle::sdk::RunXa(**client, *gid, options,
                                    [&](settle::sdk::Xa& xa) { return Transfer(xa, a); });
  if (!outcome) return std::fprintf(stderr, "%s\n", outcome.status().ToString().c_str()), 2;
  const std::string status(settle::ToString(outcome->status));
  std::printf("status %s%s%s\n", status.c_str(), outcome->reason.empty() ? "" : ": ",
              outcome->reason.c_str());
  if (outcome->committed()) return 0;
  return outcome->status == settle::GlobalStatus::kFailed ||
                 outcome->status == settle::GlobalStatus::kAborting
             ? 1
             : 2;
}
