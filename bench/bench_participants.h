#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "settle/core/status.h"

namespace settle::bench {

// What each bank account starts with: a benchmark moves 1 per transfer and never runs dry.
constexpr std::int64_t kBankBalance = 1'000'000'000;

// The two participants a benchmark transfer touches, in this process on 127.0.0.1: either
// empty endpoints (answer SUCCESS, do nothing) or two bank examples (the barrier plus real
// SQLite writes, each bank its own database with synchronous=FULL). Each serves its branches
// over HTTP (/api/TransOut, ...) and, when asked, as gRPC methods too, on a port of their own
// (/<GrpcService()>/TransOut, ...: the SDK's GrpcBranchServer, with the same handlers).
class BenchParticipants {
 public:
  enum class Kind { kEmpty, kBank };
  struct Options {
    std::size_t threads = 16;  // each server's handler threads
    bool grpc = false;         // also serve the branches as gRPC methods
    // The HTTP ports close a connection after this many answers, so that settled reconnects
    // (0: they keep it).
    std::size_t requests_per_connection = 0;
  };
  // `data_dir` holds the banks' databases.
  static Result<std::unique_ptr<BenchParticipants>> Start(Kind kind, const std::string& data_dir,
                                                          int accounts, const Options& options);
  ~BenchParticipants();

  // The gRPC service the branches are methods of: bench.Bank (empty) or bank.Bank (the bank
  // example's).
  static std::string GrpcService(Kind kind);

  int port_a() const { return port_a_; }            // pays: TransOut...
  int port_b() const { return port_b_; }            // receives: TransIn...
  int grpc_port_a() const { return grpc_port_a_; }  // 0 without gRPC
  int grpc_port_b() const { return grpc_port_b_; }

  struct Servers;

 private:
  explicit BenchParticipants(std::unique_ptr<Servers> servers);
  std::unique_ptr<Servers> servers_;
  int port_a_ = 0;
  int port_b_ = 0;
  int grpc_port_a_ = 0;
  int grpc_port_b_ = 0;
};

}  // namespace settle::bench
