#include "bank_process.h"

#include <signal.h>

#include <chrono>
#include <stdexcept>

namespace settle::testing {

BankProcess::BankProcess(std::string db_path, int accounts, long long initial_balance)
    : db_path_(std::move(db_path)),
      args_{BANK_PARTICIPANT_BINARY,
            "--port",
            "0",
            "--db",
            db_path_,
            "--accounts",
            std::to_string(accounts),
            "--initial-balance",
            std::to_string(initial_balance)} {
  Start();
}

void BankProcess::Start() {
  process_ = std::make_unique<ChildProcess>(args_, db_path_ + ".log");
  const std::string line =
      process_->WaitForLine("bank-participant listening on", std::chrono::seconds(20));
  const std::size_t colon = line.rfind(':');
  if (line.empty() || colon == std::string::npos) {
    throw std::runtime_error("bank-participant did not start; see " + db_path_ + ".log");
  }
  port_ = std::stoi(line.substr(colon + 1));
}

void BankProcess::Kill() {
  if (!process_) return;
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(10));
  process_.reset();
}

void BankProcess::Restart() {
  Kill();
  Start();
}

}  // namespace settle::testing
