#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/grpc_unary/unary_call.h"

namespace grpc {
class Channel;
}

namespace settle::bench {

// The load generator's own calls to a participant's gRPC branch methods (a TCC's Try, and the
// direct baseline), made as settled makes its gRPC branch calls (docs/protocol.md §10.4): one
// unary call per branch call on one channel (one HTTP/2 connection) to 127.0.0.1:port, the
// body as the request message, dtm-gid, dtm-trans_type, dtm-branch_id and dtm-op in the
// metadata.
//
// Thread-safety: Call may be awaited from any number of coroutines at once; each resumes on
// its own executor.
class GrpcBranchClient {
 public:
  explicit GrpcBranchClient(int port);
  ~GrpcBranchClient();
  GrpcBranchClient(const GrpcBranchClient&) = delete;
  GrpcBranchClient& operator=(const GrpcBranchClient&) = delete;

  // Calls `method` ("/package.Service/Method"): OK when it answered OK, otherwise an error
  // naming the method and gRPC's code. Copies what it needs before it returns the awaitable
  // that makes the call: nothing it runs refers to the arguments.
  asio::awaitable<Status> Call(std::string_view method, std::string_view gid,
                               std::string_view trans_type, std::string_view branch_id,
                               std::string_view op, const std::string& body, Duration timeout);

 private:
  asio::awaitable<Status> Send(grpc_unary::UnaryRequest request);

  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace settle::bench
