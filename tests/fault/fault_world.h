#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bank_process.h"
#include "fault_proxy.h"
#include "settle/sdk/client.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle::testing {

// One money transfer: TransOut at one bank, TransIn at the other.
struct Transfer {
  std::string gid;
  bool tcc = true;  // else a saga
  int from_bank = 0;
  std::string from_account = "1";
  int to_bank = 1;
  std::string to_account = "1";
  long long amount = 10;
};

struct WorldOptions {
  int accounts = 5;
  long long initial_balance = 10000;
  std::vector<std::string> settled_args = {"--retry-interval", "100ms", "--retry-max", "500ms",
                                           "--log-level",      "warn"};
  std::string settled_db;   // default: settle.db in the world's temp dir
  std::string settled_log;  // default: beside settled_db, as "<settled_db>.log"
};

// The fault scenarios' world: two real bank-participant processes, each behind a FaultProxy,
// and a real settled process, with a client on the participant SDK. Every branch URL (Try
// calls from the client, and the coordinator's calls) goes through the bank's proxy, so a
// test can fault any call of any transfer. Transfers run through Run() are recorded, and
// CheckInvariants() proves what the issue asks of every fault scenario.
class FaultWorld {
 public:
  explicit FaultWorld(WorldOptions options = {});
  ~FaultWorld();

  BankProcess& bank(int i) { return *banks_[i]; }
  FaultProxy& proxy(int i) { return *proxies_[i]; }
  SettledProcess& settled() { return *settled_; }
  const TempDir& dir() const { return dir_; }
  // A client for settled (replaced when settled restarts on the same port it had).
  std::shared_ptr<sdk::Client> client();

  // The URL of bank i's API as transactions see it: through its proxy.
  std::string BankApi(int i) const;

  // Runs `t` as the transfer example does (TCC: TransOut Try, TransIn Try, submit; saga:
  // TransOut then TransIn) and records it. A fresh gid when t.gid is empty.
  Result<sdk::Outcome> Run(Transfer t, const sdk::TransOptions& options = {});
  std::string NewGid();
  // Records a transfer made another way (by a workflow's service, say), so that CheckInvariants
  // counts it when its gid succeeded.
  void Record(const Transfer& t);

  void KillSettled();     // kill -9
  void RestartSettled();  // on the same database and port
  // Replaces bank i's process (kill -9, start on the same database), and points its proxy
  // at the new port.
  void RestartBank(int i);

  // Waits (bounded) until settled has no unfinished transaction; false on timeout.
  bool WaitUntilAllFinished(std::chrono::seconds timeout = std::chrono::seconds(60));
  // The final status of a gid (nullopt: the coordinator never stored it).
  std::optional<GlobalStatus> StatusOf(const std::string& gid);

  // Every fault scenario ends with these: every global transaction finished; total money
  // unchanged; no frozen funds and no pending credits left; and each account's balance exactly
  // what the committed transfers make it, so every branch took effect exactly once.
  void CheckInvariants(std::chrono::seconds timeout = std::chrono::seconds(60));

  // The barrier rows of bank i for gid: "op" -> reason (read from its database file).
  std::map<std::string, std::string> BarrierRows(int i, const std::string& gid);

  // GET bank i's account (directly, not through the proxy): {balance, frozen}.
  std::pair<long long, long long> Account(int i, const std::string& account);

  const WorldOptions& options() const { return options_; }

 private:
  WorldOptions options_;
  TempDir dir_;
  std::vector<std::unique_ptr<BankProcess>> banks_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
  std::unique_ptr<SettledProcess> settled_;
  int settled_port_ = 0;
  std::mutex mu_;
  std::shared_ptr<sdk::Client> client_;
  std::map<std::string, Transfer> transfers_;  // by gid: a retried transfer counts once
};

}  // namespace settle::testing
