#include "settle/grpc_listen/first_message_watch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "settle/core/duration_text.h"
#include "settle/core/thread_name.h"

namespace settle::grpc_listen {

FirstMessageWatch::FirstMessageWatch(Duration timeout, std::size_t max_waiting, const Clock* clock)
    : timeout_(std::max(timeout, Duration(1))),
      max_waiting_(std::max<std::size_t>(max_waiting, 1)),
      max_per_peer_(std::max<std::size_t>(max_waiting_ / kPeerShareDivisor, 1)),
      clock_(clock != nullptr ? *clock : system_clock_),
      thread_([this] { Loop(); }) {}

FirstMessageWatch::~FirstMessageWatch() { Stop(); }

namespace {

// The address in gRPC's name of a peer: "ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7",
// "ipv6:[::1]:51234" -> "ipv6:[::1]"; anything else as it is.
std::string_view AddressOf(std::string_view peer) {
  if (!peer.starts_with("ipv4:") && !peer.starts_with("ipv6:")) return peer;
  const std::size_t colon = peer.rfind(':');
  return colon > 4 ? peer.substr(0, colon) : peer;
}

}  // namespace

FirstMessageWatch::Refusal FirstMessageWatch::Arm(Waiting& waiting, std::string_view peer) {
  std::lock_guard lock(mutex_);
  if (deadlines_.size() >= max_waiting_) {
    ++refused_;
    return Refusal::kBudget;
  }
  const std::string_view address = AddressOf(peer);
  auto held = per_peer_.find(address);
  if (held != per_peer_.end() && held->second >= max_per_peer_) {
    ++refused_;
    return Refusal::kPeerShare;
  }
  if (held == per_peer_.end()) held = per_peer_.emplace(std::string(address), 0).first;
  ++held->second;
  waiting.peer = held->first;
  const MonoTime deadline = clock_.Monotonic() + timeout_;
  const bool earliest = deadlines_.empty() || deadline < deadlines_.begin()->first;
  waiting.entry = deadlines_.emplace(deadline, &waiting);
  waiting.armed = true;
  waiting.expired = false;
  if (earliest) wake_.notify_one();
  return Refusal::kNone;
}

void FirstMessageWatch::Forget(Waiting& waiting) {
  const auto held = per_peer_.find(waiting.peer);
  if (held != per_peer_.end() && --held->second == 0) per_peer_.erase(held);
}

bool FirstMessageWatch::Disarm(Waiting& waiting) {
  std::lock_guard lock(mutex_);
  if (waiting.expired) return false;
  if (waiting.armed) {
    deadlines_.erase(waiting.entry);
    waiting.armed = false;
    Forget(waiting);
  }
  return true;
}

void FirstMessageWatch::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::size_t FirstMessageWatch::waiting() const {
  std::lock_guard lock(mutex_);
  return deadlines_.size();
}

std::uint64_t FirstMessageWatch::expired() const {
  std::lock_guard lock(mutex_);
  return expired_;
}

std::uint64_t FirstMessageWatch::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

void FirstMessageWatch::Loop() {
  NameThisThread("grpc-first-msg");
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (deadlines_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const MonoTime now = clock_.Monotonic();
    const MonoTime next = deadlines_.begin()->first;
    if (next > now) {
      // A fake clock does not move the wait: at most 100 ms between readings.
      wake_.wait_for(lock, std::min<MonoTime>(next - now, Duration(100)));
      continue;
    }
    std::vector<Waiting*> due;
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      Waiting* waiting = deadlines_.begin()->second;
      deadlines_.erase(deadlines_.begin());
      waiting->armed = false;
      waiting->expired = true;
      Forget(*waiting);
      due.push_back(waiting);
    }
    expired_ += due.size();
    // The expiry owns each call now (Disarm answers false): run outside the lock, since
    // cancelling may complete the reactor's read on this thread.
    lock.unlock();
    // A copy: the call may end (and its reactor, holding the Waiting, be deleted) inside it.
    for (Waiting* waiting : due) std::function<void()>(waiting->expire)();
    lock.lock();
  }
}

std::string FirstMessageWatch::ExpiryMessage(std::string_view timeout_name) const {
  return "the request message did not arrive within " + FormatDuration(timeout_) +
         " of the call (" + std::string(timeout_name) + ")";
}

std::string FirstMessageWatch::RefusalMessage(Refusal refusal, std::string_view limit_name) const {
  const bool budget = refusal == Refusal::kBudget;
  return "quota: " + std::to_string(budget ? max_waiting_ : max_per_peer_) +
         (budget ? " calls are" : " calls from this address are") +
         " waiting for their request message, the most " + std::string(limit_name) + " allows" +
         (budget ? "" : " one address (a quarter of all)") + "; retry later";
}

}  // namespace settle::grpc_listen
