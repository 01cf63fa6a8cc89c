#include "bench_participants.h"

#include <vector>

#include "bank_service.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/participant.h"

namespace settle::bench {

struct BenchParticipants::Servers {
  std::vector<std::unique_ptr<sdk::Participant>> empty;
  std::vector<std::unique_ptr<sdk::GrpcBranchServer>> empty_grpc;
  std::vector<std::unique_ptr<bank::BankService>> banks;
};

namespace {

// Served at /api/<name> over HTTP and /bench.Bank/<name> over gRPC.
constexpr const char* kBranchNames[] = {
    "TransOutTry",   "TransOutConfirm", "TransOutCancel",     "TransInTry", "TransInConfirm",
    "TransInCancel", "TransOut",        "TransOutCompensate", "TransIn",    "TransInCompensate"};

sdk::BranchReply EmptyBranch(const sdk::BranchRequest&) { return sdk::BranchReply::Success(); }

// Returns the HTTP port, and sets `grpc_port` when `grpc`.
Result<int> StartEmpty(BenchParticipants::Servers& servers,
                       const BenchParticipants::Options& options, int& grpc_port) {
  auto participant = std::make_unique<sdk::Participant>(sdk::ParticipantOptions{
      .threads = options.threads, .max_requests_per_connection = options.requests_per_connection});
  for (const char* name : kBranchNames) {
    participant->OnBranch(std::string("/api/") + name, EmptyBranch);
  }
  auto port = participant->Start("127.0.0.1", 0);
  if (!port) return port;
  servers.empty.push_back(std::move(participant));
  if (options.grpc) {
    auto server = std::make_unique<sdk::GrpcBranchServer>(
        sdk::GrpcBranchServerOptions{.threads = options.threads});
    const std::string service = BenchParticipants::GrpcService(BenchParticipants::Kind::kEmpty);
    for (const char* name : kBranchNames) {
      server->OnBranch("/" + service + "/" + name, EmptyBranch);
    }
    auto bound = server->Start("127.0.0.1", 0);
    if (!bound) return bound.status();
    grpc_port = *bound;
    servers.empty_grpc.push_back(std::move(server));
  }
  return port;
}

Result<int> StartBank(BenchParticipants::Servers& servers, const std::string& db, int accounts,
                      const BenchParticipants::Options& options, int& grpc_port) {
  bank::BankOptions bank_options;
  bank_options.db_path = db;
  bank_options.accounts = accounts;
  bank_options.initial_balance = kBankBalance;
  bank_options.threads = options.threads;
  bank_options.max_requests_per_connection = options.requests_per_connection;
  auto bank = bank::BankService::Open(bank_options);
  if (!bank) return bank.status();
  auto port = (*bank)->Start("127.0.0.1", 0);
  if (!port) return port;
  if (options.grpc) {
    auto bound = (*bank)->StartGrpc("127.0.0.1", 0);
    if (!bound) return bound.status();
    grpc_port = *bound;
  }
  servers.banks.push_back(std::move(*bank));
  return port;
}

}  // namespace

Result<std::unique_ptr<BenchParticipants>> BenchParticipants::Start(Kind kind,
                                                                    const std::string& data_dir,
                                                                    int accounts,
                                                                    const Options& options) {
  auto servers = std::make_unique<Servers>();
  int grpc_ports[2] = {0, 0};
  Result<int> ports[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ports[i] = kind == Kind::kEmpty
                   ? StartEmpty(*servers, options, grpc_ports[i])
                   : StartBank(*servers, data_dir + (i == 0 ? "/bank-a.db" : "/bank-b.db"),
                               accounts, options, grpc_ports[i]);
    if (!ports[i]) return ports[i].status();
  }
  auto participants = std::unique_ptr<BenchParticipants>(new BenchParticipants(std::move(servers)));
  participants->port_a_ = *ports[0];
  participants->port_b_ = *ports[1];
  participants->grpc_port_a_ = grpc_ports[0];
  participants->grpc_port_b_ = grpc_ports[1];
  return participants;
}

std::string BenchParticipants::GrpcService(Kind kind) {
  return kind == Kind::kEmpty ? "bench.Bank" : "bank.Bank";
}

BenchParticipants::BenchParticipants(std::unique_ptr<Servers> servers)
    : servers_(std::move(servers)) {}

BenchParticipants::~BenchParticipants() = default;

}  // namespace settle::bench
