#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "bank_service.h"
#include "json_client.h"

namespace settle::bank {

struct AccountState {
  std::int64_t balance = 0;
  std::int64_t frozen = 0;
  bool operator==(const AccountState&) const = default;
};

// The protocol's query string, as the coordinator and the client SDKs append it.
std::string BranchQuery(const std::string& gid, const std::string& trans_type,
                        const std::string& branch_id, const std::string& op);
// {"account_id":"...","amount":N}
std::string TransferBody(const std::string& account_id, std::int64_t amount);

// A BankService running in-process on 127.0.0.1 (port 0), with an HTTP client for it. Test
// failures are REQUIREs.
class RunningBank {
 public:
  explicit RunningBank(std::string db_path, int accounts = 10,
                       std::int64_t initial_balance = 10000);
  ~RunningBank();

  int port() const { return port_; }

  settle::testing::JsonResponse Post(const std::string& path_and_query, const std::string& body);
  settle::testing::JsonResponse Get(const std::string& path);
  // A branch call of a TCC (trans_type tcc) or a saga (trans_type saga).
  settle::testing::JsonResponse Tcc(const std::string& path, const std::string& op,
                                    const std::string& account_id, std::int64_t amount,
                                    const std::string& gid = "g1",
                                    const std::string& branch_id = "01");
  settle::testing::JsonResponse Saga(const std::string& path, const std::string& op,
                                     const std::string& account_id, std::int64_t amount,
                                     const std::string& gid = "g1",
                                     const std::string& branch_id = "01");

  // Read through GET /api/accounts[/id].
  AccountState Account(const std::string& account_id);
  std::int64_t Total();
  // Rows of a table, read from the database file directly: pending credits and barrier rows
  // are not visible over HTTP.
  std::int64_t Rows(const std::string& table);
  // Runs `sql` on the database file directly, to set up states that take too many calls.
  void Execute(const std::string& sql);

  // Closes the client, then stops the service (whose Stop() would otherwise wait for the idle
  // keep-alive connection).
  void Stop();

 private:
  std::string db_path_;
  std::unique_ptr<BankService> service_;
  int port_ = 0;
  std::unique_ptr<settle::testing::JsonClient> client_;
};

}  // namespace settle::bank
