#include "bank_service.h"

#include <utility>

#include "account_routes.h"
#include "bank_db.h"
#include "transfer_branches.h"
#include "transfer_request.h"

namespace settle::bank {
namespace {

Status CheckOptions(const BankOptions& options) {
  if (options.accounts < 1 || options.accounts > 100'000) {
    return Status::InvalidArgument("accounts: must be in 1..100000");
  }
  if (options.initial_balance < 0 || options.initial_balance > kMaxAmount) {
    return Status::InvalidArgument("initial-balance: must be in 0.." + std::to_string(kMaxAmount));
  }
  if (options.threads < 1 || options.threads > 4096) {
    return Status::InvalidArgument("threads: must be in 1..4096");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<BankService>> BankService::Open(const BankOptions& options) {
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  Result<std::unique_ptr<sdk::SqliteBarrierStore>> store =
      sdk::SqliteBarrierStore::Open(options.db_path);
  if (!store) return store.status();
  // The accounts live next to the barrier table, so that a branch's business change and its
  // barrier rows share one local transaction.
  Result<std::unique_ptr<sdk::BarrierTransaction>> tx = (*store)->Begin();
  if (!tx) return tx.status();
  s = BankDb(sdk::SqliteBarrierStore::Connection(**tx))
          .CreateSchema(options.accounts, options.initial_balance);
  if (s.ok()) s = (*tx)->Commit();
  if (!s.ok()) return s;
  tx->reset();
  return std::unique_ptr<BankService>(new BankService(std::move(*store), options));
}

BankService::BankService(std::unique_ptr<sdk::SqliteBarrierStore> store, const BankOptions& options)
    : store_(std::move(store)),
      barrier_(*store_, clock_),
      grpc_(sdk::GrpcBranchServerOptions{.threads = options.threads}),
      participant_(sdk::ParticipantOptions{.threads = options.threads}) {
  if (options.barrier_retention.count() > 0) {
    cleaner_ = std::make_unique<sdk::BarrierCleaner>(
        barrier_, sdk::BarrierCleanerOptions{.retention = options.barrier_retention});
  }
  participant_.OnTry("/api/TransOutTry", GuardedTransfer(barrier_, TransOutTry))
      .OnConfirm("/api/TransOutConfirm", GuardedTransfer(barrier_, TransOutConfirm))
      .OnCancel("/api/TransOutCancel", GuardedTransfer(barrier_, TransOutCancel))
      .OnTry("/api/TransInTry", GuardedTransfer(barrier_, TransInTry))
      .OnConfirm("/api/TransInConfirm", GuardedTransfer(barrier_, TransInConfirm))
      .OnCancel("/api/TransInCancel", GuardedTransfer(barrier_, TransInCancel))
      .OnAction("/api/TransOut", GuardedTransfer(barrier_, TransOut))
      .OnCompensate("/api/TransOutCompensate", GuardedTransfer(barrier_, TransOutCompensate))
      .OnAction("/api/TransIn", GuardedTransfer(barrier_, TransIn))
      .OnCompensate("/api/TransInCompensate", GuardedTransfer(barrier_, TransInCompensate))
      .OnGet("/api/accounts", ListAccountsRoute(*store_))
      .OnGet(R"(/api/accounts/([^/]+))", GetAccountRoute(*store_));
  grpc_.OnTry("/bank.Bank/TransOutTry", GuardedTransfer(barrier_, TransOutTry))
      .OnConfirm("/bank.Bank/TransOutConfirm", GuardedTransfer(barrier_, TransOutConfirm))
      .OnCancel("/bank.Bank/TransOutCancel", GuardedTransfer(barrier_, TransOutCancel))
      .OnTry("/bank.Bank/TransInTry", GuardedTransfer(barrier_, TransInTry))
      .OnConfirm("/bank.Bank/TransInConfirm", GuardedTransfer(barrier_, TransInConfirm))
      .OnCancel("/bank.Bank/TransInCancel", GuardedTransfer(barrier_, TransInCancel))
      .OnAction("/bank.Bank/TransOut", GuardedTransfer(barrier_, TransOut))
      .OnCompensate("/bank.Bank/TransOutCompensate", GuardedTransfer(barrier_, TransOutCompensate))
      .OnAction("/bank.Bank/TransIn", GuardedTransfer(barrier_, TransIn))
      .OnCompensate("/bank.Bank/TransInCompensate", GuardedTransfer(barrier_, TransInCompensate));
}

BankService::~BankService() { Stop(); }

Result<int> BankService::Start(const std::string& host, int port) {
  Result<int> bound = participant_.Start(host, port);
  if (bound && cleaner_ != nullptr) cleaner_->Start();
  return bound;
}

Result<int> BankService::StartGrpc(const std::string& host, int port) {
  return grpc_.Start(host, port);
}

void BankService::Stop() {
  grpc_.Stop();
  participant_.Stop();
  if (cleaner_ != nullptr) cleaner_->Stop();
}

}  // namespace settle::bank
