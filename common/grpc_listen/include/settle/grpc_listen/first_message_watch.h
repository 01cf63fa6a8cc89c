#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "settle/core/clock.h"

namespace settle::grpc_listen {

// The deadline of a stream's first message, and a cap on the streams still waiting for one.
// gRPC (1.51) bounds neither: a client that opens a stream and sends part of its request
// message, or none, holds the stream, its memory and a slot of the connection's
// MAX_CONCURRENT_STREAMS for as long as the connection lives. A server reactor that sees the
// stream before its message (a generic service's) arms a Waiting when it starts its read and
// disarms it when the read completes; a Waiting still armed at its deadline is expired: the
// watch calls its `expire` (which cancels the call, so its memory is freed) from the watch's
// thread. Exactly one of Disarm and the expiry wins: Disarm returns false when the expiry
// did, and the reactor then leaves the call to `expire`, which must finish it.
//
// Lifetime: a Waiting must stay where it is (the reactor's member) until Disarm returned or
// its expire ran; the watch must outlive every Waiting armed on it. Thread-safety: all
// members from any thread.
class FirstMessageWatch {
 public:
  struct Waiting {
    std::function<void()> expire;  // set before Arm
   private:
    friend class FirstMessageWatch;
    std::multimap<MonoTime, Waiting*>::iterator entry;
    std::string peer;
    bool armed = false;
    bool expired = false;
  };

  // `timeout`: from Arm to the expiry (at least 1 ms). `max_waiting`: streams that may wait at
  // once (at least 1), of which one peer address may hold kPeerShare at most (at least 1), so
  // that one host's stalled streams cannot take the budget from the others. `clock`: null for
  // the system's; must outlive the watch.
  FirstMessageWatch(Duration timeout, std::size_t max_waiting, const Clock* clock = nullptr);

  // The part of max_waiting one peer address may hold: a quarter.
  static constexpr std::size_t kPeerShareDivisor = 4;

  // Why Arm refused.
  enum class Refusal { kNone, kBudget, kPeerShare };
  ~FirstMessageWatch();  // Stop()
  FirstMessageWatch(const FirstMessageWatch&) = delete;
  FirstMessageWatch& operator=(const FirstMessageWatch&) = delete;

  // Starts the deadline of `waiting`, a stream from `peer` (gRPC's name of it, as
  // "ipv4:10.0.0.7:51234": its address counts, not its port); kNone when armed, otherwise why
  // not (max_waiting are waiting, or the peer's share): the caller refuses the stream at once
  // (RESOURCE_EXHAUSTED).
  Refusal Arm(Waiting& waiting, std::string_view peer);
  // Ends it: true if the message came in time (the reactor goes on), false if it expired
  // (its expire finishes the call). Once per Arm that returned true.
  bool Disarm(Waiting& waiting);

  // Stops the thread; armed Waitings then never expire. Idempotent.
  void Stop();

  Duration timeout() const { return timeout_; }
  std::size_t max_waiting() const { return max_waiting_; }
  std::size_t max_waiting_per_peer() const { return max_per_peer_; }
  std::size_t waiting() const;
  std::uint64_t expired() const;  // streams cut since construction

  // What a stream's client is told, naming the setting an operator changes (`timeout_name`,
  // `limit_name`: a flag or an option's field): that its message did not come within the
  // timeout (DEADLINE_EXCEEDED), or why Arm refused it (RESOURCE_EXHAUSTED, "quota: ...").
  std::string ExpiryMessage(std::string_view timeout_name) const;
  std::string RefusalMessage(Refusal refusal, std::string_view limit_name) const;
  std::uint64_t refused() const;  // Arm refusals since construction

 private:
  void Loop();
  void Forget(Waiting& waiting);  // its peer's count. REQUIRES mutex_

  const Duration timeout_;
  const std::size_t max_waiting_;
  const std::size_t max_per_peer_;
  SystemClock system_clock_;
  const Clock& clock_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<MonoTime, Waiting*> deadlines_;               // guarded by mutex_
  std::map<std::string, std::size_t, std::less<>> per_peer_;  // guarded by mutex_
  std::uint64_t expired_ = 0;                                 // guarded by mutex_
  std::uint64_t refused_ = 0;                                 // guarded by mutex_
  bool stopping_ = false;                                     // guarded by mutex_
  std::thread thread_;
};

}  // namespace settle::grpc_listen
