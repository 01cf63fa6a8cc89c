#include "fault_world.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "eventually.h"
#include "json_client.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"

namespace settle::testing {
namespace {

std::string Body(const std::string& account, long long amount) {
  return R"({"account_id":")" + account + R"(","amount":)" + std::to_string(amount) + "}";
}

}  // namespace

FaultWorld::FaultWorld(WorldOptions options) : options_(std::move(options)) {
  for (int i = 0; i < 2; ++i) {
    banks_.push_back(std::make_unique<BankProcess>(dir_.File("bank-" + std::to_string(i) + ".db"),
                                                   options_.accounts, options_.initial_balance));
    proxies_.push_back(std::make_unique<FaultProxy>(banks_.back()->port()));
  }
  const std::string db = options_.settled_db.empty() ? dir_.File("settle.db") : options_.settled_db;
  options_.settled_db = db;
  settled_ = std::make_unique<SettledProcess>(db, options_.settled_args, 0, options_.settled_log);
  settled_port_ = settled_->port();
  RestartSettled();  // from now on always on this port, as an operator's restart would be
}

FaultWorld::~FaultWorld() {
  // settled first: the proxies and banks it holds connections to then stop at once.
  settled_.reset();
  client_.reset();
}

std::shared_ptr<sdk::Client> FaultWorld::client() {
  std::lock_guard lock(mu_);
  return client_;
}

std::string FaultWorld::BankApi(int i) const { return proxies_[i]->Url("/api"); }

std::string FaultWorld::NewGid() {
  auto gid = client()->NewGid();
  REQUIRE(gid);
  return *gid;
}

void FaultWorld::Record(const Transfer& t) {
  std::lock_guard lock(mu_);
  transfers_[t.gid] = t;
}

Result<sdk::Outcome> FaultWorld::Run(Transfer t, const sdk::TransOptions& options) {
  std::shared_ptr<sdk::Client> c = client();
  if (t.gid.empty()) {
    auto gid = c->NewGid();
    if (!gid) return gid.status();
    t.gid = *gid;
  }
  {
    std::lock_guard lock(mu_);
    transfers_[t.gid] = t;
  }
  const std::string from = BankApi(t.from_bank);
  const std::string to = BankApi(t.to_bank);
  if (t.tcc) {
    return sdk::RunTcc(*c, t.gid, options, [&](sdk::Tcc& tcc) {
      auto out = tcc.CallBranch(Body(t.from_account, t.amount), from + "/TransOutTry",
                                from + "/TransOutConfirm", from + "/TransOutCancel");
      if (!out) return out.status();
      auto in = tcc.CallBranch(Body(t.to_account, t.amount), to + "/TransInTry",
                               to + "/TransInConfirm", to + "/TransInCancel");
      return in ? Status::Ok() : in.status();
    });
  }
  sdk::Saga saga(*c, t.gid);
  saga.Add(from + "/TransOut", from + "/TransOutCompensate", Body(t.from_account, t.amount))
      .Add(to + "/TransIn", to + "/TransInCompensate", Body(t.to_account, t.amount));
  saga.SetOptions(options);
  return saga.Submit();
}

void FaultWorld::KillSettled() { settled_->Kill(); }

void FaultWorld::RestartSettled() {
  settled_.reset();  // kills it if it still runs
  settled_ = std::make_unique<SettledProcess>(options_.settled_db, options_.settled_args,
                                              settled_port_, options_.settled_log);
  auto c = sdk::Client::Create("http://127.0.0.1:" + std::to_string(settled_port_) + "/api/settle");
  REQUIRE(c);
  std::lock_guard lock(mu_);
  client_ = std::move(*c);
}

void FaultWorld::RestartBank(int i) {
  banks_[i]->Restart();
  proxies_[i]->SetUpstream(banks_[i]->port());
}

bool FaultWorld::WaitUntilAllFinished(std::chrono::seconds timeout) {
  JsonClient http(settled_port_);
  return Eventually(
      [&] {
        bool unfinished = false;
        for (const char* status : {"prepared", "submitted", "aborting"}) {
          const auto page = http.Get(std::string("/api/settle/all?limit=1&status=") + status);
          if (page.status != 200 || !page.json["transactions"].empty()) unfinished = true;
        }
        return !unfinished;
      },
      timeout, std::chrono::milliseconds(50));
}

std::optional<GlobalStatus> FaultWorld::StatusOf(const std::string& gid) {
  auto info = client()->Query(gid);
  REQUIRE(info);
  if (!info->has_value()) return std::nullopt;
  return (*info)->status;
}

std::pair<long long, long long> FaultWorld::Account(int i, const std::string& account) {
  JsonClient http(banks_[i]->port());
  const auto r = http.Get("/api/accounts/" + account);
  REQUIRE(r.status == 200);
  return {r.json["balance"].get<long long>(), r.json["frozen"].get<long long>()};
}

std::map<std::string, std::string> FaultWorld::BarrierRows(int i, const std::string& gid) {
  std::map<std::string, std::string> rows;
  for (const auto& row :
       QueryBankDb(banks_[i]->db_path(), "SELECT op, reason FROM barrier WHERE gid = ?1", gid)) {
    rows[row[0]] = row[1];
  }
  return rows;
}

void FaultWorld::CheckInvariants(std::chrono::seconds timeout) {
  REQUIRE(WaitUntilAllFinished(timeout));

  // What the committed transfers make each account hold.
  std::map<std::pair<int, std::string>, long long> expected;
  std::map<std::string, Transfer> transfers;
  {
    std::lock_guard lock(mu_);
    transfers = transfers_;
  }
  int committed = 0;
  for (const auto& [gid, t] : transfers) {
    const std::optional<GlobalStatus> status = StatusOf(t.gid);
    INFO("gid " << t.gid);
    if (!status) continue;  // never stored: it had no effect
    CHECK(IsTerminal(*status));
    if (*status != GlobalStatus::kSucceed) continue;
    ++committed;
    expected[{t.from_bank, t.from_account}] -= t.amount;
    expected[{t.to_bank, t.to_account}] += t.amount;
  }
  long long total = 0;
  for (int i = 0; i < 2; ++i) {
    JsonClient http(banks_[i]->port());
    const auto all = http.Get("/api/accounts");
    REQUIRE(all.status == 200);
    for (const auto& account : all.json["accounts"]) {
      const std::string id = account["account_id"];
      INFO("bank " << i << " account " << id);
      CHECK(account["frozen"] == 0);
      CHECK(account["balance"].get<long long>() == options_.initial_balance + expected[{i, id}]);
      total += account["balance"].get<long long>() + account["frozen"].get<long long>();
    }
    INFO("bank " << i);
    CHECK(QueryBankDb(banks_[i]->db_path(), "SELECT COUNT(*) FROM pending_credit", "")[0][0] ==
          "0");
  }
  CHECK(total == 2LL * options_.accounts * options_.initial_balance);
  INFO(committed << " of " << transfers.size() << " transfers committed");
  SUCCEED();
}

}  // namespace settle::testing
