#pragma once

#include <cstddef>
#include <memory>

#include "settle/coordinator/branch_caller.h"
#include "settle/coordinator/executor.h"

namespace settle::coordinator {

struct HttpBranchCallerOptions {
  // Idle keep-alive connections kept per participant host:port.
  std::size_t max_idle_connections_per_host = 64;
  // A participant's answer beyond this many bytes is read and discarded: only the start of a
  // body matters for classification and last_error.
  std::size_t max_response_bytes = 64 * 1024;
};

// Calls participants over HTTP exactly as protocol.md §4 says: POST with the stored body when
// it is non-empty, otherwise GET; the registered URL plus gid, trans_type, branch_id and op;
// Content-Type: application/json plus the branch headers; the call's timeout for connecting,
// sending and each read. Connections are kept alive in a pool per host:port with TCP_NODELAY.
// A host that resolves to several addresses (localhost: ::1 and 127.0.0.1) is tried address
// by address. A transport error on a reused keep-alive connection (the participant closed it
// while idle) is retried once at once on a fresh connection; branch handlers are idempotent.
//
// CallAll runs the first call on the calling thread and offers the others to the executor;
// the calling thread also runs any call no executor thread has started yet, so CallAll never
// waits on a queued task and cannot deadlock even when every executor thread is inside CallAll.
class HttpBranchCaller final : public BranchCaller {
 public:
  explicit HttpBranchCaller(Executor& executor, HttpBranchCallerOptions options = {});
  ~HttpBranchCaller() override;

  std::vector<BranchOutcome> CallAll(const std::vector<BranchCall>& calls) override;

  // One call on the calling thread.
  BranchOutcome Call(const BranchCall& call);

 private:
  class ClientPool;
  Executor& executor_;
  HttpBranchCallerOptions options_;
  std::unique_ptr<ClientPool> pool_;
};

}  // namespace settle::coordinator
