#include "bank_process.h"

#include <sqlite3.h>

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

std::vector<std::vector<std::string>> QueryBankDb(const std::string& db_path,
                                                  const std::string& sql,
                                                  const std::string& param) {
  sqlite3* db = nullptr;
  std::vector<std::vector<std::string>> rows;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      if (!param.empty()) sqlite3_bind_text(stmt, 1, param.c_str(), -1, SQLITE_TRANSIENT);
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        std::vector<std::string> row;
        for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
          const auto* text = sqlite3_column_text(stmt, c);
          row.emplace_back(text != nullptr ? reinterpret_cast<const char*>(text) : "");
        }
        rows.push_back(std::move(row));
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return rows;
}

}  // namespace settle::testing
