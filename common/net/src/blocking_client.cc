#include "settle/net/blocking_client.h"

#include <exception>
#include <future>

namespace settle::net {

Result<std::unique_ptr<BlockingClient>> BlockingClient::Create(ClientOptions options) {
  auto client = Client::Create(std::move(options));
  if (!client) return client.status();
  return std::unique_ptr<BlockingClient>(new BlockingClient(std::move(*client)));
}

BlockingClient::BlockingClient(std::unique_ptr<Client> client)
    : io_(1, "settle-client"), client_(std::move(client)) {
  io_.Start();
}

BlockingClient::~BlockingClient() {
  io_.Stop();
  client_.reset();
}

Result<ClientAnswer> BlockingClient::Send(ClientRequest request) {
  std::promise<Result<ClientAnswer>> promise;
  std::future<Result<ClientAnswer>> answer = promise.get_future();
  asio::co_spawn(
      io_.context(),
      [this, &promise, request = std::move(request)]() mutable -> asio::awaitable<void> {
        Result<ClientAnswer> answer = co_await client_->Send(std::move(request));
        promise.set_value(std::move(answer));
      },
      [&promise](std::exception_ptr error) {
        if (error) promise.set_value(Status::Internal("HTTP client failed"));
      });
  return answer.get();
}

}  // namespace settle::net
