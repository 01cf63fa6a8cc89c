#include "participant_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace settle::testing {
namespace {

// Enough workers that every connection a test opens at once is served at once: httplib keeps a
// worker on a keep-alive connection for as long as the connection is open.
constexpr std::size_t kServerThreads = 32;

// httplib listens with a backlog of 5; tests open many connections at once, and a dropped SYN
// costs a one-second retransmit. Linux enlarges the queue when listen() is called again.
class Server final : public httplib::Server {
 public:
  void WidenBacklog() { ::listen(svr_sock_, SOMAXCONN); }
};

}  // namespace

struct ParticipantServer::Impl {
  Server server;
  std::thread listener;

  mutable std::mutex mu;
  // Signalled when a request is answered (WaitForCalls) and when the server is stopping (so
  // that delayed answers end early).
  mutable std::condition_variable changed;
  bool stopping = false;
  bool listener_done = false;
  std::vector<ReceivedCall> calls;
  std::map<std::string, std::size_t> answered;  // per path
  std::map<std::string, std::deque<ScriptedAnswer>> scripts;
  std::map<std::string, Handler> handlers;
  std::map<std::string, ScriptedAnswer> defaults;
  std::optional<std::size_t> hold_after;  // HoldAfter's count, until Release
  std::size_t held = 0;                   // requests waiting for a release now
  std::uint64_t releases = 0;             // Release() calls so far

  void Serve(const httplib::Request& req, httplib::Response& res);
};

void ParticipantServer::Impl::Serve(const httplib::Request& req, httplib::Response& res) {
  ReceivedCall call;
  call.received_at = std::chrono::steady_clock::now();
  call.method = req.method;
  call.path = req.path;
  for (const auto& [key, value] : req.params) call.query.emplace(key, value);
  for (const auto& [name, value] : req.headers) call.headers.emplace(name, value);
  call.body = req.body;

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
    } else if (auto it = handlers.find(req.path); it != handlers.end()) {
      handler = it->second;
    } else if (auto it = defaults.find(req.path); it != defaults.end()) {
      answer = it->second;
    } else {
      answer = ScriptedAnswer{};
    }
  }
  // A handler may block until other requests arrive, so it runs without the lock.
  if (!answer) answer = handler(call);

  std::unique_lock<std::mutex> wait_lock(mu);
  if (answer->delay > std::chrono::milliseconds::zero()) {
    changed.wait_for(wait_lock, answer->delay, [this] { return stopping; });
  }
  if (answer->held || (hold_after && index >= *hold_after)) {
    const std::uint64_t release = releases + 1;
    ++held;
    changed.notify_all();
    changed.wait(wait_lock, [&] { return stopping || releases >= release; });
    --held;
  }
  wait_lock.unlock();
  res.status = answer->status;
  res.set_content(answer->body, "application/json");

  std::lock_guard<std::mutex> lock(mu);
  calls[index].answered_at = std::chrono::steady_clock::now();
  ++answered[req.path];
  changed.notify_all();
}

ParticipantServer::ParticipantServer() : impl_(std::make_unique<Impl>()) {
  Server& server = impl_->server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(1'000'000);
  // httplib's stop() waits for a worker idling on a keep-alive connection until this timeout,
  // and a caller may outlive the server; one second (the minimum) keeps teardown short.
  server.set_keep_alive_timeout(1);
  auto serve = [impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    impl->Serve(req, res);
  };
  server.Get(".*", serve);
  server.Post(".*", serve);

  port_ = server.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("ParticipantServer: cannot bind 127.0.0.1");
  server.WidenBacklog();
  impl_->listener = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    std::lock_guard<std::mutex> lock(impl->mu);
    impl->listener_done = true;
    impl->changed.notify_all();
  });
  // The socket already listens, so requests queue up meanwhile; this wait only makes sure
  // that stop() in the destructor finds a running server to stop (it ignores one that has
  // not started yet). httplib offers no notification for it.
  while (!server.is_running()) {
    std::unique_lock<std::mutex> lock(impl_->mu);
    if (impl_->changed.wait_for(lock, std::chrono::milliseconds(1),
                                [this] { return impl_->listener_done; })) {
      break;
    }
  }
}

ParticipantServer::~ParticipantServer() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
    impl_->changed.notify_all();
  }
  // stop() closes the listening socket; listen_after_bind then joins the workers, which
  // finish the requests in progress (delays end early, see Serve).
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

std::string ParticipantServer::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
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
  impl_->handlers[path] = std::move(handler);
}

void ParticipantServer::HoldAfter(std::size_t received) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hold_after = received;
}

void ParticipantServer::Release() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hold_after.reset();
  ++impl_->releases;
  impl_->changed.notify_all();
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
