#include "participant_server.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "settle/async/await.h"
#include "settle/async/event.h"
#include "settle/async/io_threads.h"
#include "settle/net/server.h"

namespace settle::testing {
namespace {

// Custom handlers may block (to hold a request until others arrive): they run here, not on
// the I/O threads. Scripted answers, delays and holds wait without a thread.
constexpr std::size_t kHandlerThreads = 16;

}  // namespace

struct ParticipantServer::Impl {
  Impl() : io(2, "participant-io"), handlers(kHandlerThreads) {}

  asio::awaitable<net::Response> Serve(net::Request& req);

  async::IoThreads io;
  asio::thread_pool handlers;
  std::unique_ptr<net::Server> server;

  mutable std::mutex mu;
  // Signalled when a request is answered or held (WaitForCalls, WaitForHeld).
  mutable std::condition_variable changed;
  async::Event stopping;  // ends delays and holds at once
  std::vector<ReceivedCall> calls;
  std::map<std::string, std::size_t> answered;  // per path
  std::map<std::string, std::deque<ScriptedAnswer>> scripts;
  std::map<std::string, Handler> handlers_by_path;
  std::map<std::string, ScriptedAnswer> defaults;
  std::optional<std::size_t> hold_after;  // HoldAfter's count, until Release
  std::size_t held = 0;                   // requests waiting for a release now
  // What held requests wait for: set (and replaced) by Release.
  std::shared_ptr<async::Event> release = std::make_shared<async::Event>();
};

asio::awaitable<net::Response> ParticipantServer::Impl::Serve(net::Request& req) {
  ReceivedCall call;
  call.received_at = std::chrono::steady_clock::now();
  call.method = req.method;
  call.path = req.path;
  for (const auto& [key, value] : req.params) call.query.emplace(key, value);
  for (const auto& [name, value] : req.headers) call.headers.emplace(name, value);
  call.body = req.body;
  call.remote_port = req.remote_port;

  std::size_t index = 0;
  std::optional<ScriptedAnswer> answer;
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(mu);
    index = calls.size();
    calls.push_back(call);
    auto script = scripts.find(req.path);
    if (script != scripts.end() && !script->second.empty()) {
      answer = std::move(script->second.front());
      script->second.pop_front();
    } else if (auto it = handlers_by_path.find(req.path); it != handlers_by_path.end()) {
      handler = it->second;
    } else if (auto it = defaults.find(req.path); it != defaults.end()) {
      answer = it->second;
    } else {
      answer = ScriptedAnswer{};
    }
  }
  if (!answer)
    answer = co_await async::Offload(handlers, [&handler, &call] { return handler(call); });
  if (answer->delay > std::chrono::milliseconds::zero()) {
    co_await stopping.WaitFor(Duration(answer->delay.count()));
  }
  std::shared_ptr<async::Event> released;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (answer->held || (hold_after && index >= *hold_after)) {
      released = release;
      ++held;
      changed.notify_all();
    }
  }
  if (released != nullptr) {
    co_await released->Wait();
    std::lock_guard<std::mutex> lock(mu);
    --held;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    calls[index].answered_at = std::chrono::steady_clock::now();
    ++answered[req.path];
    changed.notify_all();
  }
  co_return net::Response{answer->status, "application/json", answer->body};
}

ParticipantServer::ParticipantServer(std::string tls_cert_file, std::string tls_key_file)
    : ParticipantServer(std::move(tls_cert_file), std::move(tls_key_file), 0, nullptr) {}

ParticipantServer::ParticipantServer(int port,
                                     const std::function<void(ParticipantServer&)>& configure)
    : ParticipantServer("", "", port, configure) {}

ParticipantServer::ParticipantServer(std::string tls_cert_file, std::string tls_key_file, int port,
                                     const std::function<void(ParticipantServer&)>& configure)
    : impl_(std::make_unique<Impl>()), tls_(!tls_cert_file.empty()) {
  if (configure) configure(*this);
  impl_->io.Start();
  impl_->server = std::make_unique<net::Server>(
      impl_->io.context(),
      net::ServerOptions{.keep_alive_timeout = Duration(60'000),
                         .tls = {std::move(tls_cert_file), std::move(tls_key_file)}},
      [impl = impl_.get()](net::Request& request) { return impl->Serve(request); });
  Result<int> bound = impl_->server->Start("127.0.0.1", port);
  if (!bound) throw std::runtime_error("ParticipantServer: " + bound.status().ToString());
  port_ = *bound;
}

ParticipantServer::~ParticipantServer() {
  std::shared_ptr<async::Event> release;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    release = impl_->release;
  }
  // Delays and holds end early, so that the requests in progress are answered now.
  impl_->stopping.Set();
  release->Set();
  impl_->server->Stop();
  impl_->handlers.join();
  impl_->io.Stop();
}

std::string ParticipantServer::Url(const std::string& path) const {
  return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_) + path;
}

void ParticipantServer::Script(const std::string& path, std::vector<ScriptedAnswer> answers) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& script = impl_->scripts[path];
  for (auto& answer : answers) script.push_back(std::move(answer));
}

void ParticipantServer::SetDefault(const std::string& path, ScriptedAnswer answer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->defaults[path] = std::move(answer);
}

void ParticipantServer::SetHandler(const std::string& path, Handler handler) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->handlers_by_path[path] = std::move(handler);
}

void ParticipantServer::HoldAfter(std::size_t received) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hold_after = received;
}

void ParticipantServer::Release() {
  std::shared_ptr<async::Event> release;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->hold_after.reset();
    release = std::exchange(impl_->release, std::make_shared<async::Event>());
  }
  release->Set();
}

std::size_t ParticipantServer::Held() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->held;
}

bool ParticipantServer::WaitForHeld(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout, [&] { return impl_->held >= count; });
}

std::vector<ReceivedCall> ParticipantServer::Calls() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->calls;
}

std::vector<ReceivedCall> ParticipantServer::CallsTo(const std::string& path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<ReceivedCall> out;
  for (const auto& call : impl_->calls) {
    if (call.path == path) out.push_back(call);
  }
  return out;
}

std::size_t ParticipantServer::CountCalls(const std::string& path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::size_t count = 0;
  for (const auto& call : impl_->calls) count += call.path == path ? 1 : 0;
  return count;
}

bool ParticipantServer::WaitForCalls(const std::string& path, std::size_t count,
                                     std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout, [&] {
    auto it = impl_->answered.find(path);
    return it != impl_->answered.end() && it->second >= count;
  });
}

}  // namespace settle::testing
