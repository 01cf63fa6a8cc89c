#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/barrier_cleaner.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/signature_refusals.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::bank {

struct BankOptions {
  std::string db_path;
  int accounts = 10;                     // "1".."accounts", created on the first start only
  std::int64_t initial_balance = 10000;  // of each account created
  // Branch calls handled at once (idle keep-alive connections hold no thread).
  std::size_t threads = 64;
  // Barrier rows older than this are deleted in the background (0: kept forever).
  Duration barrier_retention{0};
  // The HTTP port's bounds on hostile clients (ParticipantOptions): a whole request within
  // request_timeout, connections from one peer address at most.
  Duration request_timeout{10000};
  std::size_t max_connections_per_peer = 512;
  // The HTTP port closes a connection after this many answers (0: never).
  std::size_t max_requests_per_connection = 0;
  // With keys, the branches (HTTP and gRPC) run only calls the coordinator signed with one of
  // them (docs/protocol.md §4.9), and Trys as their policy says (main: with settled's
  // countersignature of their registration). GET /metrics then counts the refusals of both,
  // by reason, in Prometheus's text format, after the HTTP port's connections and cut
  // requests (ParticipantCountsText), which it always serves.
  std::optional<sdk::SignedCalls> signed_calls;
  // The names settled dials the HTTP and the gRPC branches by (host:port), which signed
  // calls must name; empty: the listening address (ParticipantOptions::authorities).
  std::vector<std::string> authorities;
  std::vector<std::string> grpc_authorities;
};

// The bank: its accounts and the barrier in one SQLite file, and the branch URLs of a TCC and
// a saga transfer (transfer_branches.h) plus the account reads (account_routes.h) on a
// participant server; with StartGrpc, the same branches as gRPC methods too
// (/bank.Bank/TransOut, /bank.Bank/TransInConfirm, ...; the request message is the same JSON
// body). Thread-safe; Stop() (or the destructor) waits for calls in progress.
class BankService {
 public:
  // Opens the database, creating the tables and, on the first start, the accounts.
  // InvalidArgument for options out of range; Unavailable if the database cannot be opened.
  static Result<std::unique_ptr<BankService>> Open(const BankOptions& options);
  ~BankService();

  // Serves on host:port (0: any free port); returns the port.
  Result<int> Start(const std::string& host, int port);
  // Serves the branches as gRPC methods on host:port (0: any free port); returns the port.
  Result<int> StartGrpc(const std::string& host, int port);
  void Stop();

 private:
  BankService(std::unique_ptr<sdk::SqliteBarrierStore> store, const BankOptions& options);

  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  sdk::Barrier barrier_;
  std::unique_ptr<sdk::BarrierCleaner> cleaner_;  // null without a barrier retention
  sdk::GrpcBranchServer grpc_;
  sdk::Participant participant_;  // last: stopped before what its handlers use goes away
};

}  // namespace settle::bank
