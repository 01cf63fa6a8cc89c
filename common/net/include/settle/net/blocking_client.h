#pragma once

#include <memory>

#include "settle/async/io_threads.h"
#include "settle/net/client.h"

namespace settle::net {

// The Client for code that is not a coroutine (a service's own thread, a command-line tool):
// Send blocks the calling thread until the answer, while the exchange runs on an I/O thread
// of the BlockingClient's own.
//
// Thread-safety: Send from any number of threads at once, but never from the client's own
// I/O thread (it would wait for itself).
class BlockingClient {
 public:
  static Result<std::unique_ptr<BlockingClient>> Create(ClientOptions options = {});
  ~BlockingClient();

  // Client::Send, waited for.
  Result<ClientAnswer> Send(ClientRequest request);
  // Client::CloseIdle: the next request opens a new connection.
  void CloseIdle() { client_->CloseIdle(); }

 private:
  BlockingClient(std::unique_ptr<Client> client);
  async::IoThreads io_;
  std::unique_ptr<Client> client_;
};

}  // namespace settle::net
