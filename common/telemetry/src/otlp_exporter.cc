#include "settle/telemetry/otlp_exporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace settle::telemetry {
namespace {

constexpr std::size_t kMaxAnswerBytes = 4096;

// OTLP/HTTP's retryable answers (the specification's "Retryable Response Codes").
bool Retryable(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// How batches are posted: OTLP/HTTP JSON with the headers configured, retried as OTLP says.
net::RetrySettings OtlpRetries(const OtlpSettings& settings) {
  net::RetrySettings retries{.timeout = settings.timeout,
                             .attempts = settings.attempts,
                             .retry_delay = settings.retry_delay,
                             .max_answer_bytes = kMaxAnswerBytes,
                             .retryable = Retryable};
  retries.headers.emplace_back("Content-Type", "application/json");
  for (const auto& header : settings.headers) retries.headers.push_back(header);
  return retries;
}

}  // namespace

Result<std::string> OtlpTracesUrl(std::string_view base) {
  Result<Url> url = ParseUrl(base);
  if (!url) return url.status();
  if (url->path_and_query.find('?') != std::string::npos) {
    return Status::InvalidArgument("a base URL has no query (spans go to its path + /v1/traces)");
  }
  std::string out(base);
  if (out.back() != '/') out += '/';
  return out + "v1/traces";
}

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::Create(const std::string& traces_url,
                                                           const Clock& clock,
                                                           asio::any_io_executor executor,
                                                           net::Client& client,
                                                           OtlpSettings settings) {
  Result<Url> parsed = ParseUrl(traces_url);
  if (!parsed) {
    return Status::InvalidArgument("OTLP endpoint '" + traces_url +
                                   "': " + parsed.status().message());
  }
  if (settings.max_batch == 0 || settings.max_queued == 0) {
    return Status::InvalidArgument("OTLP export: the queue and a batch must hold a span at least");
  }
  return std::unique_ptr<OtlpExporter>(new OtlpExporter(
      std::move(*parsed), traces_url, clock, std::move(executor), client, std::move(settings)));
}

OtlpExporter::OtlpExporter(Url url, std::string url_text, const Clock& clock,
                           asio::any_io_executor executor, net::Client& client,
                           OtlpSettings settings)
    : url_text_(std::move(url_text)),
      settings_(std::move(settings)),
      strand_(asio::make_strand(executor)),
      wait_(strand_),
      poster_(std::move(url), client, clock, strand_, OtlpRetries(settings_)) {}

OtlpExporter::~OtlpExporter() { Stop(); }

std::size_t OtlpExporter::queued() const {
  const std::lock_guard lock(mutex_);
  return queue_.size();
}

void OtlpExporter::CutWaitShortLocked() {
  ++posted_;
  asio::post(strand_, [this] {
    if (filling_) wait_.cancel();
    const std::lock_guard lock(mutex_);
    --posted_;
    idle_.notify_all();  // under the lock: Stop cannot return (and free this) before it is out
  });
}

void OtlpExporter::Export(Span span) {
  bool start = false;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= settings_.max_queued) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      if (!stopping_ && drops_.Failed()) {  // once stopped, drops are the shutdown's
        spdlog::warn(
            "OTLP export: {} spans are waiting for {} (the most it queues), so spans are dropped "
            "until it catches up (counted as settle_otlp_spans_total{{result=\"dropped\"}})",
            queue_.size(), url_text_);
      }
      return;
    }
    if (drops_.failures() > 0) {
      if (const std::uint64_t n = drops_.Succeeded(); n > 0) {
        spdlog::warn("OTLP export: spans are queued again, after {} dropped", n);
      }
    }
    queue_.push_back(std::move(span));
    if (!sending_) {
      sending_ = true;
      start = true;
    } else if (queue_.size() == settings_.max_batch) {
      CutWaitShortLocked();  // a full batch goes at once
    }
  }
  if (start) asio::co_spawn(strand_, Drain(), asio::detached);
}

void OtlpExporter::Stop(Duration grace) {
  // The poster first: a batch taken from now on gets its one attempt within the grace.
  poster_.Stop(grace);
  std::unique_lock lock(mutex_);
  if (!stopping_) {
    stopping_ = true;
    if (sending_) CutWaitShortLocked();
  }
  idle_.wait(lock, [this] { return !sending_ && posted_ == 0; });
}

asio::awaitable<void> OtlpExporter::Drain() {
  for (;;) {
    bool fill = false;
    {
      const std::lock_guard lock(mutex_);
      if (queue_.empty()) {
        // Under the lock that Export takes: a span queued from now on starts a new Drain.
        // After this, nothing of `this` is touched (Stop may return and free it).
        sending_ = false;
        idle_.notify_all();
        co_return;
      }
      fill = !stopping_ && queue_.size() < settings_.max_batch;
    }
    if (fill) {
      filling_ = true;
      wait_.expires_after(settings_.flush_interval);
      boost::system::error_code ec;
      co_await wait_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      filling_ = false;
    }
    std::vector<Span> batch;
    {
      const std::lock_guard lock(mutex_);
      const std::size_t n = std::min(queue_.size(), settings_.max_batch);
      batch.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    std::string body = OtlpTraceRequest(batch, settings_.resource);
    const Status result = co_await poster_.Post(std::move(body));
    if (result.ok()) {
      exported_.fetch_add(batch.size(), std::memory_order_relaxed);
      if (const std::uint64_t n = failing_.Succeeded(); n > 0) {
        spdlog::warn("OTLP export: {} takes spans again, after {} failed batches", url_text_, n);
      }
    } else {
      failed_.fetch_add(batch.size(), std::memory_order_relaxed);
      if (failing_.Failed()) {
        spdlog::error(
            "OTLP export: {} did not take {} spans: {} (spans are dropped while it fails, "
            "counted as settle_otlp_spans_total{{result=\"failed\"}})",
            url_text_, batch.size(), result.message());
      }
    }
  }
}

}  // namespace settle::telemetry
