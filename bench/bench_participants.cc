#include "bench_participants.h"

#include <vector>

#include "bank_service.h"
#include "settle/sdk/participant.h"

namespace settle::bench {

struct BenchParticipants::Servers {
  std::vector<std::unique_ptr<sdk::Participant>> empty;
  std::vector<std::unique_ptr<bank::BankService>> banks;
};

namespace {

constexpr const char* kBranchPaths[] = {"/api/TransOutTry",    "/api/TransOutConfirm",
                                        "/api/TransOutCancel", "/api/TransInTry",
                                        "/api/TransInConfirm", "/api/TransInCancel",
                                        "/api/TransOut",       "/api/TransOutCompensate",
                                        "/api/TransIn",        "/api/TransInCompensate"};

Result<int> StartEmpty(BenchParticipants::Servers& servers, std::size_t threads) {
  auto participant =
      std::make_unique<sdk::Participant>(sdk::ParticipantOptions{.threads = threads});
  for (const char* path : kBranchPaths) {
    participant->OnBranch(path,
                          [](const sdk::BranchRequest&) { return sdk::BranchReply::Success(); });
  }
  auto port = participant->Start("127.0.0.1", 0);
  if (port) servers.empty.push_back(std::move(participant));
  return port;
}

Result<int> StartBank(BenchParticipants::Servers& servers, const std::string& db, int accounts,
                      std::size_t threads) {
  bank::BankOptions options;
  options.db_path = db;
  options.accounts = accounts;
  options.initial_balance = kBankBalance;
  options.threads = threads;
  auto bank = bank::BankService::Open(options);
  if (!bank) return bank.status();
  auto port = (*bank)->Start("127.0.0.1", 0);
  if (port) servers.banks.push_back(std::move(*bank));
  return port;
}

}  // namespace

Result<std::unique_ptr<BenchParticipants>> BenchParticipants::Start(Kind kind,
                                                                    const std::string& data_dir,
                                                                    int accounts,
                                                                    std::size_t threads) {
  auto servers = std::make_unique<Servers>();
  Result<int> a = kind == Kind::kEmpty
                      ? StartEmpty(*servers, threads)
                      : StartBank(*servers, data_dir + "/bank-a.db", accounts, threads);
  if (!a) return a.status();
  Result<int> b = kind == Kind::kEmpty
                      ? StartEmpty(*servers, threads)
                      : StartBank(*servers, data_dir + "/bank-b.db", accounts, threads);
  if (!b) return b.status();
  auto participants = std::unique_ptr<BenchParticipants>(new BenchParticipants(std::move(servers)));
  participants->port_a_ = *a;
  participants->port_b_ = *b;
  return participants;
}

BenchParticipants::BenchParticipants(std::unique_ptr<Servers> servers)
    : servers_(std::move(servers)) {}

BenchParticipants::~BenchParticipants() = default;

}  // namespace settle::bench
