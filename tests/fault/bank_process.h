#pragma once

#include <memory>
#include <string>
#include <vector>

#include "child_process.h"

namespace settle::testing {

// The real bank-participant binary on 127.0.0.1 at a kernel-chosen port, with its own
// database file (log in "<db>.log"). Restarting it on the same file keeps its accounts and
// barrier rows.
class BankProcess {
 public:
  // Starts and waits until it listens; throws if it does not.
  BankProcess(std::string db_path, int accounts, long long initial_balance);

  int port() const { return port_; }
  const std::string& db_path() const { return db_path_; }
  bool running() const { return process_ != nullptr; }

  void Kill();     // SIGKILL, and waits until it is gone
  void Restart();  // starts it again on the same database (a new port)

 private:
  void Start();

  std::string db_path_;
  std::vector<std::string> args_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

// Runs `sql` (with `param` bound to ?1 unless empty) on a read-only connection to a bank's
// live database (WAL lets it read while the bank writes): every column as text, NULL as "".
// No rows when it cannot be read.
std::vector<std::vector<std::string>> QueryBankDb(const std::string& db_path,
                                                  const std::string& sql,
                                                  const std::string& param = "");

}  // namespace settle::testing
