#include "grpc_branch_client.h"

#include <grpcpp/grpcpp.h>

#include <utility>

#include "settle/async/await.h"
#include "settle/core/grpc_codes.h"

namespace settle::bench {

GrpcBranchClient::GrpcBranchClient(int port)
    : channel_(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials())) {}

GrpcBranchClient::~GrpcBranchClient() = default;

asio::awaitable<Status> GrpcBranchClient::Call(std::string_view method, std::string_view gid,
                                               std::string_view trans_type,
                                               std::string_view branch_id, std::string_view op,
                                               const std::string& body, Duration timeout) {
  // Built before the first suspension, so nothing below refers to the arguments.
  grpc_unary::UnaryRequest request{
      .method = std::string(method), .message = body, .timeout = timeout};
  grpc_unary::AddBranchMetadata(request.metadata, {.gid = std::string(gid),
                                                   .trans_type = std::string(trans_type),
                                                   .branch_id = std::string(branch_id),
                                                   .op = std::string(op)});
  return Send(std::move(request));
}

asio::awaitable<Status> GrpcBranchClient::Send(grpc_unary::UnaryRequest request) {
  const std::string method = request.method;
  // Started in a statement of its own (GCC 12 and temporaries across a suspension, as in
  // Workload::Post). The callback runs on one of gRPC's threads; AwaitCallback resumes this
  // coroutine on its own executor.
  asio::awaitable<grpc_unary::UnaryAnswer> calling =
      async::AwaitCallback<grpc_unary::UnaryAnswer>([this, &request](auto done) {
        grpc_unary::StartUnary(
            channel_, std::move(request),
            [done = std::move(done)](grpc_unary::UnaryAnswer a) mutable { done(std::move(a)); });
      });
  const grpc_unary::UnaryAnswer answer = co_await std::move(calling);
  if (answer.code == 0) co_return Status::Ok();
  co_return Status::Unavailable(method + ": gRPC " + GrpcCodeName(answer.code) + ": " +
                                answer.message.substr(0, 200));
}

}  // namespace settle::bench
