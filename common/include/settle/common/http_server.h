#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "settle/common/clock.h"
#include "settle/common/http_request.h"
#include "settle/common/status.h"

namespace settle {

struct HttpServerOptions {
  // Requests handled at once: the worker threads. A handler may block (a coordinator waits
  // for fsyncs and branch calls); a connection holds a worker only while one of its requests
  // is read, handled and answered, never while it idles between requests.
  std::size_t threads = 64;
  std::size_t max_body_bytes = 1 << 20;
  // A connection idle this long between requests is closed.
  Duration keep_alive_timeout{5000};
  // A request (or an answer being written) that takes longer than this is given up on: a
  // slow or stalled client cannot hold a connection open with half a request.
  Duration io_timeout{10000};
  // Connections beyond this get a 503 answer and are closed at once.
  std::size_t max_connections = 10000;
  // The answer to a request refused before any handler sees it: `status` is 400, 413, 431,
  // 501 or 505 and `problem` says why. By default that status with {"message":"request: ..."}.
  std::function<HttpResponse(int status, const std::string& problem)> refusal;
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

// A small HTTP/1.1 server for JSON APIs: keep-alive connections with TCP_NODELAY, requests
// framed by Content-Length or chunked, "Expect: 100-continue", pipelining, and a clear error
// answer (with "Connection: close") for what it cannot take: 400, 413, 431, 501, 505.
//
// The workers share one epoll set in which every connection is armed one-shot: the worker
// that wakes for a connection reads its request, runs the handler, writes the answer with
// one system call and re-arms the connection. Nothing polls on a timer; a housekeeping thread
// closes connections past their timeouts by shutting their sockets down, which the next
// worker to wake for them notices.
//
// Thread-safety: Start and Stop from one thread; the handler runs on many threads at once.
class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  // Stop().
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on host:port (port 0: any free one) and starts serving. Returns the port.
  Result<int> Start(const std::string& host, int port);

  // Stops accepting, lets handlers in progress finish and answer, closes every connection and
  // joins the threads. Idempotent.
  void Stop();

 private:
  struct Connection;
  void WorkerLoop();
  void HousekeepingLoop();
  void AcceptAll();
  // Reads, handles and answers what the connection has sent; re-arms or closes it.
  void Serve(Connection& connection);
  bool Answer(Connection& connection, const HttpResponse& response, bool close);
  void Rearm(Connection& connection);
  // Answers 503 to a connection beyond max_connections, and closes it.
  void RefuseOverLimit(int fd);
  void Close(Connection& connection);

  const HttpServerOptions options_;
  const HttpHandler handler_;
  int epoll_fd_ = -1;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd: readable once Stop() begins, waking every worker
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::vector<std::thread> workers_;
  std::thread housekeeper_;
  std::mutex housekeeping_mutex_;
  std::condition_variable housekeeping_wake_;

  std::mutex connections_mutex_;
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;  // by fd
};

}  // namespace settle
