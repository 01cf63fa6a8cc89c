#include "grpc_branch_client.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <utility>

#include "settle/async/await.h"
#include "settle/core/grpc_codes.h"

namespace settle::bench {

// What one call needs until gRPC has called back.
struct GrpcBranchClient::Exchange {
  grpc::ClientContext context;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  std::string method;
};

GrpcBranchClient::GrpcBranchClient(int port)
    : channel_(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials())) {}

GrpcBranchClient::~GrpcBranchClient() = default;

asio::awaitable<Status> GrpcBranchClient::Call(std::string_view method, std::string_view gid,
                                               std::string_view trans_type,
                                               std::string_view branch_id, std::string_view op,
                                               const std::string& body, Duration timeout) {
  // Built before the first suspension, so nothing below refers to the arguments.
  auto exchange = std::make_shared<Exchange>();
  exchange->method = std::string(method);
  exchange->context.set_deadline(std::chrono::system_clock::now() + timeout);
  exchange->context.AddMetadata("dtm-gid", std::string(gid));
  exchange->context.AddMetadata("dtm-trans_type", std::string(trans_type));
  exchange->context.AddMetadata("dtm-branch_id", std::string(branch_id));
  exchange->context.AddMetadata("dtm-op", std::string(op));
  grpc::Slice slice(body);
  exchange->request = grpc::ByteBuffer(&slice, 1);
  return Send(std::move(exchange));
}

asio::awaitable<Status> GrpcBranchClient::Send(std::shared_ptr<Exchange> exchange) {
  grpc::GenericStub stub(channel_);
  // Started in a statement of its own (GCC 12 and temporaries across a suspension, as in
  // Workload::Post). The callback runs on one of gRPC's threads; AwaitCallback resumes this
  // coroutine on its own executor.
  asio::awaitable<grpc::Status> calling =
      async::AwaitCallback<grpc::Status>([&stub, &exchange](auto done) {
        stub.UnaryCall(
            &exchange->context, exchange->method, grpc::StubOptions(), &exchange->request,
            &exchange->response,
            [exchange, done = std::move(done)](grpc::Status s) mutable { done(std::move(s)); });
      });
  const grpc::Status status = co_await std::move(calling);
  if (status.ok()) co_return Status::Ok();
  const int code = static_cast<int>(status.error_code());
  co_return Status::Unavailable(exchange->method + ": gRPC " + GrpcCodeName(code) + ": " +
                                status.error_message().substr(0, 200));
}

}  // namespace settle::bench
