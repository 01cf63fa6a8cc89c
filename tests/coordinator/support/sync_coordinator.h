#pragma once

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "settle/async/asio.h"
#include "settle/drive/coordinator.h"

namespace settle::testing {

// Runs a coroutine on `context` from plain test code and returns its result. Called from the
// test's own thread, it runs the context until it has no work left: every pass the call
// started has ended too, as if all ran inline. Called from inside one of the context's
// handlers (a test hook that runs in the middle of a pass), it runs the context only until
// this coroutine has finished.
template <typename T>
T RunCoroutine(asio::io_context& context, asio::awaitable<T> task) {
  std::optional<T> result;
  std::exception_ptr error;
  bool done = false;
  asio::co_spawn(context, std::move(task), [&](std::exception_ptr e, T value) {
    error = e;
    if (!e) result = std::move(value);
    done = true;
  });
  if (context.get_executor().running_in_this_thread()) {
    while (!done) context.run_one();
  } else {
    context.restart();
    context.run();
  }
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

// The Coordinator's operations as plain calls, for tests: each runs as RunCoroutine does.
class SyncCoordinator {
 public:
  SyncCoordinator(asio::io_context& context, drive::Coordinator& coordinator)
      : context_(context), coordinator_(coordinator) {}

  Result<std::size_t> Resume() {
    Result<std::size_t> resumed = coordinator_.Resume();
    Drain();
    return resumed;
  }
  std::string NewGid() { return coordinator_.NewGid(); }
  Status Prepare(engine::PrepareRequest r) { return Run(coordinator_.Prepare(std::move(r))); }
  Status RegisterBranch(engine::RegisterBranchRequest r) {
    return Run(coordinator_.RegisterBranch(std::move(r)));
  }
  Status Submit(engine::SubmitRequest r) { return Run(coordinator_.Submit(std::move(r))); }
  Result<storage::Transaction> PrepareWorkflow(engine::PrepareRequest r) {
    return Run(coordinator_.PrepareWorkflow(std::move(r)));
  }
  Status Abort(engine::AbortRequest r) { return Run(coordinator_.Abort(std::move(r))); }
  Result<std::optional<storage::Transaction>> Query(const std::string& gid) {
    return Run(coordinator_.Query(gid));
  }
  Result<storage::ListPage> List(const storage::ListQuery& query) {
    return Run(coordinator_.List(query));
  }
  Status ForceStop(const std::string& gid, const std::string& reason = "",
                   const std::string& actor = "") {
    return Run(coordinator_.ForceStop(engine::ForceStopRequest{gid, reason, actor, {}}));
  }
  Status Pause(const std::string& gid, const std::string& reason = "ledger bug, OPS-9",
               const std::string& actor = "on-call") {
    return Run(coordinator_.Pause(engine::PauseRequest{gid, reason, actor, {}}));
  }
  Status Resume(const std::string& gid, const std::string& reason = "fixed by hand",
                const std::string& actor = "on-call") {
    return Run(coordinator_.Resume(engine::PauseRequest{gid, reason, actor, {}}));
  }
  Status Resolve(engine::ResolveRequest r) { return Run(coordinator_.Resolve(std::move(r))); }
  Status Redirect(engine::RedirectRequest r) { return Run(coordinator_.Redirect(std::move(r))); }
  Status Resend(engine::PauseRequest r) { return Run(coordinator_.Resend(std::move(r))); }
  Status ResetNextCronTime(const std::string& gid) {
    return Run(coordinator_.ResetNextCronTime(engine::RetryNowRequest{gid}));
  }
  Status Subscribe(engine::SubscribeRequest r) { return Run(coordinator_.Subscribe(std::move(r))); }
  Status Unsubscribe(engine::SubscribeRequest r) {
    return Run(coordinator_.Unsubscribe(std::move(r)));
  }
  Result<std::vector<storage::Topic>> Topics() { return Run(coordinator_.Topics()); }
  void BeginShutdown() { coordinator_.BeginShutdown(); }

  // Runs whatever the context has to do until it has nothing left (passes started by the
  // scheduler, say).
  void Drain() {
    if (context_.get_executor().running_in_this_thread()) return;
    context_.restart();
    context_.run();
  }

 private:
  template <typename T>
  T Run(asio::awaitable<T> task) {
    return RunCoroutine(context_, std::move(task));
  }

  asio::io_context& context_;
  drive::Coordinator& coordinator_;
};

}  // namespace settle::testing
