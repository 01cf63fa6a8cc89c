#include "fault_proxy.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "fault_proxy_plan.h"
#include "fault_proxy_wire.h"
#include "settle/net/message.h"

// Design: synchronous sockets and a thread per client connection (tests open few), each with
// its own keep-alive upstream connection; an io_context thread only accepts. Messages are
// framed by the net room's readers (fault_proxy_wire.h) and sent on re-serialized with a
// Content-Length, so chunks and Connection fields stay on their own hop. A fault that
// waits (kDelay, kHold) waits on the proxy's condition variable, so it ends when the proxy
// stops; a blocked socket read or write ends when the destructor shuts the socket down. A
// request whose hold or delay is ended by the proxy stopping is not forwarded: its connection
// just closes, as it would if the proxy process died.

namespace settle::testing {
namespace {

using boost::asio::ip::tcp;
using fault_proxy::Action;
using fault_proxy::ReadStatus;
using fault_proxy::Request;
using fault_proxy::Response;

// No "FAILURE" or "ONGOING" in these, so that the coordinator classifies them by status.
constexpr char kCannotRead[] = "the fault proxy cannot read this request: ";
constexpr char kNoAnswer[] = "the fault proxy got no answer upstream";
// How long a refused client may go on sending before its connection closes anyway. Closing a
// socket with unread bytes makes the kernel send a reset, which can destroy the 400 in flight.
constexpr std::chrono::milliseconds kLinger{500};

// An answer the proxy makes up itself (kRespond, or one for a request it cannot forward).
std::string Answer(int status, std::string_view body, bool close) {
  return fault_proxy::SerializeResponseHead(status, {{"Content-Type", "application/json"}},
                                            body.size(), close) +
         std::string(body);
}

bool Write(tcp::socket& socket, std::string_view first, std::string_view second = {}) {
  std::array<boost::asio::const_buffer, 2> buffers = {
      boost::asio::buffer(first.data(), first.size()),
      boost::asio::buffer(second.data(), second.size())};
  boost::system::error_code error;
  boost::asio::write(socket, buffers, error);
  return !error;
}

// An upstream closes idle keep-alive connections after a while; such a connection
// reads as EOF, and sending on it would fail.
bool IdleConnectionUsable(int fd) {
  char byte;
  return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) < 0 &&
         (errno == EAGAIN || errno == EWOULDBLOCK);
}

// Ends the sending side, then reads and drops what the peer still sends until it closes or
// kLinger passes (a shutdown by the destructor also ends it).
void Linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  auto deadline = std::chrono::steady_clock::now() + kLinger;
  char scratch[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd entry{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&entry, 1, static_cast<int>(left.count())) <= 0) return;
    if (::recv(fd, scratch, sizeof scratch, MSG_DONTWAIT) <= 0) return;
  }
}

}  // namespace

struct FaultProxy::Impl {
  // One client connection, served by its own thread, which alone uses the sockets. The
  // descriptors are copied here, under mu, so that others can shut them down; a thread
  // unregisters a descriptor before closing it, so nobody shuts down a reused number.
  struct Connection {
    explicit Connection(tcp::socket socket)
        : client(std::move(socket)), upstream(client.get_executor()), client_reader(client) {}
    tcp::socket client;
    tcp::socket upstream;  // closed until the first forward
    fault_proxy::ClientReader client_reader;
    std::thread thread;
    // Guarded by mu.
    int client_fd = -1;    // -1: closed
    int upstream_fd = -1;  // -1: closed
    std::uint64_t upstream_generation = 0;
    bool upstream_busy = false;  // an exchange is under way on it
    bool done = false;           // the thread is about to return
  };

  void Accept();
  void Launch(tcp::socket socket);
  void Stop();

  void Serve(Connection& connection);
  bool ServeOne(Connection& connection);  // false: close the connection
  bool Handle(Connection& connection, const Request& request, const std::optional<Action>& action);
  // Sends `wire` (a serialized request) upstream and reads the answer.
  bool Forward(Connection& connection, const std::string& wire, Response& response);
  // Makes sure of a usable upstream connection and marks it busy; false: none can be had.
  bool UpstreamReady(Connection& connection, bool& reused);
  void SetUpstreamBusy(Connection& connection, bool busy);
  void CloseUpstream(Connection& connection);
  void CloseClient(Connection& connection);
  bool Pause(std::chrono::milliseconds delay);  // false: the proxy is stopping
  bool Hold(const std::string& path);           // false: the proxy is stopping

  boost::asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accept_thread;
  int port = 0;

  mutable std::mutex mu;
  // Signalled on every change of the counters below and when the proxy stops.
  mutable std::condition_variable changed;
  bool stopping = false;
  int upstream_port = 0;
  std::uint64_t upstream_generation = 0;  // bumped by SetUpstream
  fault_proxy::FaultPlan plan;
  std::map<std::string, std::size_t> seen;
  std::map<std::string, std::string> last_request;  // as forwarded, by path
  std::map<std::string, std::size_t> held;
  std::map<std::string, std::uint64_t> releases;  // Release calls per path
  std::size_t faults_applied = 0;
  std::list<std::unique_ptr<Connection>> connections;
};

void FaultProxy::Impl::Accept() {
  acceptor.async_accept([this](const boost::system::error_code& error, tcp::socket socket) {
    if (error == boost::asio::error::operation_aborted || !acceptor.is_open()) return;
    if (!error) Launch(std::move(socket));
    Accept();
  });
}

void FaultProxy::Impl::Launch(tcp::socket socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto connection = std::make_unique<Connection>(std::move(socket));
  std::list<std::unique_ptr<Connection>> finished;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stopping) return;
    for (auto it = connections.begin(); it != connections.end();) {
      auto next = std::next(it);
      if ((*it)->done) finished.splice(finished.end(), connections, it);
      it = next;
    }
    Connection* raw = connection.get();
    raw->client_fd = raw->client.native_handle();
    connections.push_back(std::move(connection));
    raw->thread = std::thread([this, raw] { Serve(*raw); });
  }
  for (auto& done : finished) done->thread.join();
}

void FaultProxy::Impl::Stop() {
  {
    // One critical section, so that whoever sees `stopping` (Launch, UpstreamReady) knows the
    // sockets are shut down already: a thread that fails to forward because the proxy stops
    // cannot slip a 502 out to its client. Shutting a socket down ends every blocked read and
    // write on it; `stopping` ends every wait.
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
    for (auto& connection : connections) {
      if (connection->client_fd >= 0) ::shutdown(connection->client_fd, SHUT_RDWR);
      if (connection->upstream_fd >= 0) ::shutdown(connection->upstream_fd, SHUT_RDWR);
    }
    changed.notify_all();
  }
  boost::asio::post(io, [this] {
    boost::system::error_code ignored;
    acceptor.close(ignored);
  });
  accept_thread.join();
  // The list changes no more: only the accept thread adds to it.
  for (auto& connection : connections) connection->thread.join();
}

void FaultProxy::Impl::Serve(Connection& connection) {
  while (ServeOne(connection)) {
  }
  CloseUpstream(connection);
  CloseClient(connection);
  std::lock_guard<std::mutex> lock(mu);
  connection.done = true;
}

bool FaultProxy::Impl::ServeOne(Connection& connection) {
  Request request;
  ReadStatus status = connection.client_reader.Read(request);
  if (status == ReadStatus::kClosed || status == ReadStatus::kBroken) return false;
  if (status != ReadStatus::kOk) {
    std::string body = net::MessageBody(kCannotRead + connection.client_reader.refusal());
    if (Write(connection.client, Answer(400, body, /*close=*/true))) {
      Linger(connection.client.native_handle());
    }
    return false;
  }
  // The answer to a HEAD has a Content-Length but no body, which the net room's
  // ResponseReader, not knowing the request, would wait for. Nothing in Settle sends HEAD.
  // An answer to HEAD has no body, so this one cannot say why.
  if (request.message.method == "HEAD") {
    return Write(connection.client, Answer(501, "", !request.keep_alive)) && request.keep_alive;
  }

  const std::string& path = request.message.path;
  std::optional<Action> action;
  {
    std::lock_guard<std::mutex> lock(mu);
    ++seen[path];
    last_request[path] = fault_proxy::SerializeRequest(request);
    action = plan.Decide(path);
    if (action) ++faults_applied;
    changed.notify_all();
  }
  return Handle(connection, request, action);
}

bool FaultProxy::Impl::Handle(Connection& connection, const Request& request,
                              const std::optional<Action>& action) {
  auto is = [&action](Fault fault) { return action && action->fault == fault; };
  if (is(Fault::kDropRequest)) return false;
  if (is(Fault::kRespond)) {
    return Write(connection.client, Answer(action->status, action->body, !request.keep_alive)) &&
           request.keep_alive;
  }
  if (is(Fault::kDelay) && !Pause(action->delay)) return false;
  if (is(Fault::kHold) && !Hold(request.message.path)) return false;

  const std::string wire = fault_proxy::SerializeRequest(request);
  Response response;
  if (!Forward(connection, wire, response)) {
    // These two promise the client no complete answer, whatever happened upstream.
    if (is(Fault::kDropResponse) || is(Fault::kCloseMidBody)) return false;
    return Write(connection.client,
                 Answer(502, net::MessageBody(kNoAnswer), !request.keep_alive)) &&
           request.keep_alive;
  }
  if (is(Fault::kDuplicate)) {
    Response ignored;
    Forward(connection, wire, ignored);
  }
  if (is(Fault::kDropResponse)) return false;
  // An upstream that ends its connection with the answer ends the client's too, as it would
  // without the proxy in between.
  const bool close = !request.keep_alive || response.closes;
  const std::string head = fault_proxy::SerializeResponseHead(response.status, response.headers,
                                                              response.body.size(), close);
  if (is(Fault::kCloseMidBody)) {
    // The head announces the whole body, so half of it reads as cut. An answer without a body
    // would look complete after its head, so such an answer loses half of its head instead.
    if (!response.body.empty()) {
      Write(connection.client, head,
            std::string_view(response.body).substr(0, response.body.size() / 2));
    } else {
      Write(connection.client, std::string_view(head).substr(0, head.size() / 2));
    }
    return false;
  }
  return Write(connection.client, head, response.body) && !close;
}

bool FaultProxy::Impl::Forward(Connection& connection, const std::string& wire,
                               Response& response) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = false;
    if (!UpstreamReady(connection, reused)) return false;
    ReadStatus status = ReadStatus::kClosed;
    if (Write(connection.upstream, wire)) {
      status = fault_proxy::ReadResponse(connection.upstream, response);
    }
    SetUpstreamBusy(connection, false);
    if (status == ReadStatus::kOk) {
      if (!response.reusable) CloseUpstream(connection);
      return true;
    }
    CloseUpstream(connection);
    // An upstream may close an idle connection just as a request goes out on it (after the
    // check in UpstreamReady); a connection that ends without a byte of answer is taken for
    // that, and the request is sent once more on a new connection. A fresh connection that
    // fails is the upstream's failure.
    if (!reused || status != ReadStatus::kClosed) return false;
  }
  return false;
}

bool FaultProxy::Impl::UpstreamReady(Connection& connection, bool& reused) {
  if (connection.upstream.is_open()) {
    bool current = false;
    {
      // Busy from here, so that SetUpstream leaves the connection alone.
      std::lock_guard<std::mutex> lock(mu);
      current = connection.upstream_generation == upstream_generation;
      connection.upstream_busy = current;
    }
    if (current && IdleConnectionUsable(connection.upstream.native_handle())) {
      reused = true;
      return true;
    }
    SetUpstreamBusy(connection, false);
    CloseUpstream(connection);
  }
  reused = false;
  boost::system::error_code error;
  connection.upstream.open(tcp::v4(), error);
  if (error) return false;
  int target_port = 0;
  {
    // Registered before connecting: a connect can wait (on an upstream whose backlog is full,
    // a stopped process's), and the destructor's shutdown ends that wait too.
    std::lock_guard<std::mutex> lock(mu);
    if (!stopping) {
      target_port = upstream_port;
      connection.upstream_fd = connection.upstream.native_handle();
      connection.upstream_generation = upstream_generation;
      connection.upstream_busy = true;
    }
  }
  if (target_port > 0) {
    connection.upstream.connect(tcp::endpoint(boost::asio::ip::address_v4::loopback(),
                                              static_cast<unsigned short>(target_port)),
                                error);
  }
  if (target_port > 0 && !error) connection.upstream.set_option(tcp::no_delay(true), error);
  if (target_port <= 0 || error) {
    SetUpstreamBusy(connection, false);
    CloseUpstream(connection);
    return false;
  }
  return true;
}

void FaultProxy::Impl::SetUpstreamBusy(Connection& connection, bool busy) {
  std::lock_guard<std::mutex> lock(mu);
  connection.upstream_busy = busy;
}

void FaultProxy::Impl::CloseUpstream(Connection& connection) {
  {
    std::lock_guard<std::mutex> lock(mu);
    connection.upstream_fd = -1;
  }
  boost::system::error_code ignored;
  connection.upstream.close(ignored);
}

void FaultProxy::Impl::CloseClient(Connection& connection) {
  {
    std::lock_guard<std::mutex> lock(mu);
    connection.client_fd = -1;
  }
  boost::system::error_code ignored;
  connection.client.close(ignored);
}

bool FaultProxy::Impl::Pause(std::chrono::milliseconds delay) {
  std::unique_lock<std::mutex> lock(mu);
  return !changed.wait_for(lock, delay, [this] { return stopping; });
}

bool FaultProxy::Impl::Hold(const std::string& path) {
  std::unique_lock<std::mutex> lock(mu);
  // Release(path) lets go of the requests held when it is called, not of later ones.
  std::uint64_t release = releases[path];
  ++held[path];
  changed.notify_all();
  changed.wait(lock, [&] { return stopping || releases[path] != release; });
  --held[path];
  changed.notify_all();
  return !stopping;
}

FaultProxy::FaultProxy(int upstream_port) : impl_(std::make_unique<Impl>()) {
  impl_->upstream_port = upstream_port;
  tcp::endpoint endpoint(boost::asio::ip::address_v4::loopback(), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen(boost::asio::socket_base::max_listen_connections);
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->Accept();
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

FaultProxy::~FaultProxy() { impl_->Stop(); }

int FaultProxy::port() const { return impl_->port; }

std::string FaultProxy::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + path;
}

void FaultProxy::AddRule(FaultRule rule) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->plan.AddRule(std::move(rule));
}

void FaultProxy::ClearRules() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->plan.ClearRules();
}

void FaultProxy::SetRandomFaults(RandomFaults faults) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->plan.SetRandomFaults(std::move(faults));
}

void FaultProxy::SetUpstream(int port) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->upstream_port = port;
  ++impl_->upstream_generation;
  // Idle connections to the old upstream close now, so that it sees its clients go (a server
  // being destroyed may wait for them); busy ones finish their exchange first, and every one
  // reconnects on its next request because its generation is stale.
  for (auto& connection : impl_->connections) {
    if (connection->upstream_fd >= 0 && !connection->upstream_busy) {
      ::shutdown(connection->upstream_fd, SHUT_RDWR);
    }
  }
}

void FaultProxy::Release(const std::string& path) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ++impl_->releases[path];
  impl_->changed.notify_all();
}

std::string FaultProxy::LastRequest(const std::string& path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->last_request.find(path);
  return it == impl_->last_request.end() ? std::string() : it->second;
}

std::size_t FaultProxy::Seen(const std::string& path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->seen.find(path);
  return it == impl_->seen.end() ? 0 : it->second;
}

std::size_t FaultProxy::Held(const std::string& path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->held.find(path);
  return it == impl_->held.end() ? 0 : it->second;
}

std::size_t FaultProxy::FaultsApplied() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->faults_applied;
}

bool FaultProxy::WaitForSeen(const std::string& path, std::size_t count,
                             std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout, [&] {
    auto it = impl_->seen.find(path);
    return it != impl_->seen.end() && it->second >= count;
  });
}

bool FaultProxy::WaitForHeld(const std::string& path, std::size_t count,
                             std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout, [&] {
    auto it = impl_->held.find(path);
    return it != impl_->held.end() && it->second >= count;
  });
}

}  // namespace settle::testing
