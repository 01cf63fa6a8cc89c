#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/net/cancellation.h"
#include "settle/net/client.h"
#include "settle/net/message.h"

namespace settle::net {

struct RetrySettings {
  Duration timeout{10000};    // per attempt
  int attempts = 3;           // per body, the first included (at least 1)
  Duration retry_delay{500};  // before the second attempt, doubling after
  Headers headers;            // sent with every request
  std::size_t max_answer_bytes = 4096;
  // Whether an answer that is not 2xx is worth another attempt (an attempt that got no answer
  // always is); null: every one is.
  std::function<bool(int status)> retryable;
};

// POSTs bodies to one URL, each until it is taken (a 2xx answer) or its attempts run out:
// attempts that get no answer, or an answer `retryable` accepts, are made again after a
// backoff that doubles; any other answer ends the body's attempts. A background sender's
// delivery (the OTLP exporter's batches, the alert webhook's alerts), so that its retries and
// its shutdown are written once.
//
// Stop(grace) bounds what is left: from then on, each body gets one attempt, made only while
// the grace lasts; an attempt in flight when Stop is called is cut (its socket closed) when the
// grace runs out, and a backoff ends at once.
//
// Requests are not idempotent (a body sent twice is shown twice): a kept-alive connection the
// server closed is not retried by the client; the attempts here decide.
//
// Lifetime: `client`, `clock` and the strand's context must outlive it; destroy it only after
// Stop has returned and no Post is in progress. Thread-safety: Post on `strand`, one at a time;
// Stop from any thread that is not one of the context's.
class RetryingPoster {
 public:
  RetryingPoster(Url url, Client& client, const Clock& clock,
                 asio::strand<asio::any_io_executor> strand, RetrySettings settings);
  RetryingPoster(const RetryingPoster&) = delete;
  RetryingPoster& operator=(const RetryingPoster&) = delete;

  // OK once an attempt is answered 2xx; otherwise Unavailable or Pending saying why the last
  // attempt failed ("HTTP 503: <the answer's start>", the client's error, "the stop's grace
  // ran out: <the client's>" for one cut), or, when Stop's grace had run out before the first
  // attempt, Unavailable("not attempted: shutting down").
  asio::awaitable<Status> Post(std::string body);

  // Starts the grace (see above) and returns once a Post in progress has taken it in (at
  // once when none is). Idempotent: the first grace stands.
  void Stop(Duration grace);

 private:
  // One attempt.
  asio::awaitable<Result<ClientAnswer>> Attempt(const std::string& body, Duration timeout);
  // On strand_, after Stop: ends a backoff, and has the attempt in flight cut when the grace
  // runs out.
  void CutShort();

  const Url url_;
  Client& client_;
  const Clock& clock_;
  const RetrySettings settings_;
  asio::strand<asio::any_io_executor> strand_;
  asio::steady_timer backoff_;               // on strand_
  asio::steady_timer grace_end_;             // on strand_: cuts the attempt in flight
  std::shared_ptr<Cancellation> in_flight_;  // on strand_: the attempt's; null between
  bool backing_off_ = false;                 // on strand_
  std::mutex mutex_;
  std::condition_variable taken_in_;
  bool posting_ = false;         // a Post runs; guarded by mutex_
  bool stopping_ = false;        // guarded by mutex_
  MonoTime give_up_at_{0};       // clock_.Monotonic(), once stopping; guarded by mutex_
  std::size_t cuts_posted_ = 0;  // CutShort posted and not yet run; guarded by mutex_
};

}  // namespace settle::net
