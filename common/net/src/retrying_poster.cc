#include "settle/net/retrying_poster.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace settle::net {
namespace {

constexpr std::size_t kQuotedAnswerBytes = 200;

bool IsSuccess(int status) { return status >= 200 && status <= 299; }

}  // namespace

RetryingPoster::RetryingPoster(Url url, Client& client, const Clock& clock,
                               asio::strand<asio::any_io_executor> strand, RetrySettings settings)
    : url_(std::move(url)),
      client_(client),
      clock_(clock),
      settings_(std::move(settings)),
      strand_(std::move(strand)),
      backoff_(strand_),
      grace_end_(strand_) {}

void RetryingPoster::Stop(Duration grace) {
  std::unique_lock lock(mutex_);
  if (!stopping_) {
    stopping_ = true;
    give_up_at_ = clock_.Monotonic() + grace;
    // A Post that starts later reads stopping_ itself; one under way may be waiting (for an
    // answer, or to attempt again), and only its strand may touch what it waits on.
    if (posting_) {
      ++cuts_posted_;
      asio::post(strand_, [this] { CutShort(); });
    }
  }
  taken_in_.wait(lock, [this] { return cuts_posted_ == 0; });
}

void RetryingPoster::CutShort() {
  if (backing_off_) backoff_.cancel();
  MonoTime give_up_at{0};
  {
    const std::lock_guard lock(mutex_);
    give_up_at = give_up_at_;
  }
  if (in_flight_ != nullptr) {
    grace_end_.expires_after(give_up_at - clock_.Monotonic());
    // Holds the attempt's cancellation, not `this`: it may run after the poster is gone
    // (cancelled, or having fired just as the attempt ended), when cancelling it is harmless.
    grace_end_.async_wait([cancellation = in_flight_](const boost::system::error_code& ec) {
      if (!ec) cancellation->Cancel();
    });
  }
  const std::lock_guard lock(mutex_);
  --cuts_posted_;
  taken_in_.notify_all();  // under the lock: Stop cannot return (and free this) before it is out
}

asio::awaitable<Result<ClientAnswer>> RetryingPoster::Attempt(const std::string& body,
                                                              Duration timeout) {
  ClientRequest request;
  request.method = "POST";
  request.url = url_;
  request.headers = settings_.headers;
  request.body = body;
  request.timeout = timeout;
  request.idempotent = false;
  request.max_answer_bytes = settings_.max_answer_bytes;
  const auto cancellation = std::make_shared<Cancellation>();
  request.cancellation = cancellation;
  in_flight_ = cancellation;
  Result<ClientAnswer> answer = co_await client_.Send(std::move(request));
  in_flight_ = nullptr;
  grace_end_.cancel();
  if (!answer && cancellation->cancelled()) {
    co_return Status(answer.status().code(),
                     "the stop's grace ran out: " + answer.status().message());
  }
  co_return answer;
}

asio::awaitable<Status> RetryingPoster::Post(std::string body) {
  {
    const std::lock_guard lock(mutex_);
    posting_ = true;
  }
  Status last = Status::Unavailable("not attempted: shutting down");
  const int attempts = std::max(1, settings_.attempts);
  Duration delay = settings_.retry_delay;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    Duration timeout = settings_.timeout;
    bool stopping = false;
    {
      const std::lock_guard lock(mutex_);
      stopping = stopping_;
      if (stopping) {
        // Once stopping, a body gets one attempt, and only while the grace lasts.
        const auto left = std::chrono::duration_cast<Duration>(give_up_at_ - clock_.Monotonic());
        if (attempt > 1 || left <= Duration(0)) break;
        timeout = std::min(timeout, left);
      }
    }
    Result<ClientAnswer> answer = co_await Attempt(body, timeout);
    bool again = true;
    if (!answer) {
      last = answer.status();
    } else if (IsSuccess(answer->status)) {
      last = Status::Ok();
      break;
    } else {
      std::string why = "HTTP " + std::to_string(answer->status);
      if (!answer->body.empty()) why += ": " + answer->body.substr(0, kQuotedAnswerBytes);
      last = Status::Unavailable(std::move(why));
      again = !settings_.retryable || settings_.retryable(answer->status);
    }
    if (!again || attempt == attempts || stopping) break;
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) break;
    }
    backing_off_ = true;
    backoff_.expires_after(delay);
    boost::system::error_code ec;
    co_await backoff_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    backing_off_ = false;
    delay *= 2;
  }
  {
    const std::lock_guard lock(mutex_);
    posting_ = false;
  }
  co_return last;
}

}  // namespace settle::net
