#pragma once

#include <memory>
#include <vector>

#include "settle/async/io_threads.h"
#include "settle/calls/http_branch_caller.h"
#include "settle/net/client.h"

namespace settle::testing {

// An HttpBranchCaller on I/O threads of its own, called from plain test code: each call
// blocks until the coroutine's outcome is in.
class SyncBranchCaller {
 public:
  explicit SyncBranchCaller(std::size_t io_threads = 2, net::ClientOptions options = {},
                            calls::HttpBranchCallerOptions caller_options = {})
      : io_(io_threads) {
    auto client = net::Client::Create(std::move(options));
    if (!client) throw std::runtime_error(client.status().ToString());
    client_ = std::move(*client);
    caller_ = std::make_unique<calls::HttpBranchCaller>(*client_, clock_, caller_options);
    io_.Start();
  }
  ~SyncBranchCaller() {
    io_.Stop();
    caller_.reset();
    client_.reset();
  }

  engine::BranchOutcome Call(engine::BranchCall call) {
    return asio::co_spawn(io_.context(), caller_->Call(std::move(call)), asio::use_future).get();
  }
  std::vector<engine::BranchOutcome> CallAll(std::vector<engine::BranchCall> calls) {
    return asio::co_spawn(io_.context(), caller_->CallAll(std::move(calls)), asio::use_future)
        .get();
  }
  calls::HttpBranchCaller& caller() { return *caller_; }
  async::IoThreads& io() { return io_; }

 private:
  SystemClock clock_;
  async::IoThreads io_;
  std::unique_ptr<net::Client> client_;
  std::unique_ptr<calls::HttpBranchCaller> caller_;
};

}  // namespace settle::testing
