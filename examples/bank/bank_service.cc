#include "bank_service.h"

#include <utility>

#include "account_routes.h"
#include "bank_db.h"
#include "settle/sdk/participant_counts.h"
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
  // A signed call captured and replayed runs once: its barrier row must outlive the time its
  // signature is accepted, up to twice the window after the call first ran (clocks apart).
  if (options.signed_calls && options.barrier_retention.count() > 0) {
    const auto accepted = 2 * std::chrono::duration_cast<Duration>(options.signed_calls->window);
    if (options.barrier_retention <= accepted) {
      return Status::InvalidArgument(
          "barrier-retention: must be more than twice the signature window (" +
          std::to_string(options.signed_calls->window.count()) +
          " s) with --coordinator-key, or a replayed call would find its barrier row deleted");
    }
  }
  return Status::Ok();
}

// A transfer's branches: the name each is served under (/api/<name> over HTTP,
// /bank.Bank/<name> over gRPC), the one op it serves, its business code.
struct TransferBranch {
  const char* name;
  BranchOp op;
  TransferBusiness business;
};
const TransferBranch kTransferBranches[] = {
    {"TransOutTry", BranchOp::kTry, TransOutTry},
    {"TransOutConfirm", BranchOp::kConfirm, TransOutConfirm},
    {"TransOutCancel", BranchOp::kCancel, TransOutCancel},
    {"TransInTry", BranchOp::kTry, TransInTry},
    {"TransInConfirm", BranchOp::kConfirm, TransInConfirm},
    {"TransInCancel", BranchOp::kCancel, TransInCancel},
    {"TransOut", BranchOp::kAction, TransOut},
    {"TransOutCompensate", BranchOp::kCompensate, TransOutCompensate},
    {"TransIn", BranchOp::kAction, TransIn},
    {"TransInCompensate", BranchOp::kCompensate, TransInCompensate},
};

// Registers `handler` for `op` only on `server` (a Participant or a GrpcBranchServer).
template <typename Server>
void Serve(Server& server, const std::string& path, BranchOp op, sdk::BranchHandler handler) {
  switch (op) {
    case BranchOp::kTry:
      server.OnTry(path, std::move(handler));
      return;
    case BranchOp::kConfirm:
      server.OnConfirm(path, std::move(handler));
      return;
    case BranchOp::kCancel:
      server.OnCancel(path, std::move(handler));
      return;
    case BranchOp::kAction:
      server.OnAction(path, std::move(handler));
      return;
    case BranchOp::kCompensate:
      server.OnCompensate(path, std::move(handler));
      return;
    default:
      server.OnBranch(path, std::move(handler));
      return;
  }
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
      grpc_(sdk::GrpcBranchServerOptions{.threads = options.threads,
                                         .signed_calls = options.signed_calls,
                                         .authorities = options.grpc_authorities}),
      participant_(sdk::ParticipantOptions{
          .threads = options.threads,
          .request_timeout = options.request_timeout,
          .max_requests_per_connection = options.max_requests_per_connection,
          .max_connections_per_peer = options.max_connections_per_peer,
          .signed_calls = options.signed_calls,
          .authorities = options.authorities}) {
  if (options.barrier_retention.count() > 0) {
    cleaner_ = std::make_unique<sdk::BarrierCleaner>(
        barrier_, sdk::BarrierCleanerOptions{.retention = options.barrier_retention});
  }
  for (const TransferBranch& branch : kTransferBranches) {
    const sdk::BranchHandler handler = GuardedTransfer(barrier_, branch.business);
    Serve(participant_, std::string("/api/") + branch.name, branch.op, handler);
    Serve(grpc_, std::string("/bank.Bank/") + branch.name, branch.op, handler);
  }
  participant_.OnGet("/api/accounts", ListAccountsRoute(*store_))
      .OnGet(R"(/api/accounts/([^/]+))", GetAccountRoute(*store_));
  // For Prometheus to scrape: the HTTP server's connections and the requests it cut, and, when
  // calls are signed, the refusals of both doors as one metric.
  participant_.OnGet(
      "/metrics", [this, signed_calls = options.signed_calls.has_value()](const sdk::HttpRequest&) {
        std::string text = sdk::ParticipantCountsText(participant_.bound_counts());
        if (signed_calls) {
          sdk::SignatureRefusalCounts counts = participant_.signature_refusal_counts();
          counts += grpc_.signature_refusal_counts();
          text += sdk::SignatureRefusalsText(counts);
        }
        return sdk::HttpReply{.body = std::move(text),
                              .content_type = std::string(sdk::kPrometheusTextContentType)};
      });
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
