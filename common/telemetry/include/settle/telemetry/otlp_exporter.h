#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/failure_streak.h"
#include "settle/core/span.h"
#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/net/client.h"
#include "settle/net/retrying_poster.h"
#include "settle/telemetry/otlp_headers.h"
#include "settle/telemetry/otlp_json.h"

namespace settle::telemetry {

// The traces URL of an OTLP/HTTP endpoint given as a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
// means it: "v1/traces" appended to its path ("http://c:4318" -> "http://c:4318/v1/traces",
// "https://c/otel/" -> "https://c/otel/v1/traces"). InvalidArgument (without a field name)
// unless an http(s):// URL without a query.
Result<std::string> OtlpTracesUrl(std::string_view base);

struct OtlpSettings {
  std::size_t max_queued = 4096;  // spans waiting beyond this are dropped (and counted)
  std::size_t max_batch = 512;    // spans per request
  // How long a span may wait for a batch to fill; a full batch goes at once.
  Duration flush_interval{1000};
  Duration timeout{10000};    // per request
  int attempts = 3;           // per batch, for the answers OTLP says to retry
  Duration retry_delay{500};  // before the second attempt, doubling after
  // Sent with every request (a collector's API key, say).
  OtlpHeaders headers;
  OtlpResource resource;
};

// Exports finished spans to an OpenTelemetry collector over OTLP/HTTP (POST application/json
// to its traces URL, typically http://host:4318/v1/traces), so that exporting never holds up a
// transaction: Export only queues (a bounded queue: a span that does not fit is dropped and
// counted), and one coroutine sends batches in order, each as soon as it is full or has waited
// flush_interval. A batch is attempted again, with backoff (net::RetryingPoster), when the
// collector answers 429, 502, 503 or 504 or cannot be reached (OTLP's retryable failures); it
// is dropped (counted and logged) when the attempts run out or the collector refuses it
// otherwise. Failures are logged when they start and when exports work again, not once per
// batch.
//
// Lifetime: `clock`, `client` and the executor's context must outlive it; Stop (or the
// destructor) returns once nothing is being sent. Thread-safety: Export and the counters from
// any threads at once; Stop from one thread that is not an I/O thread.
class OtlpExporter final : public SpanSink {
 public:
  // InvalidArgument naming the URL when it is not an http(s):// URL.
  static Result<std::unique_ptr<OtlpExporter>> Create(const std::string& traces_url,
                                                      const Clock& clock,
                                                      asio::any_io_executor executor,
                                                      net::Client& client, OtlpSettings settings);
  // Stop().
  ~OtlpExporter() override;

  void Export(Span span) override;

  // Sends what is queued (one attempt a batch) within `grace`, drops the rest, and returns once
  // nothing is being sent: a batch still on its way when the grace runs out is cut (failed),
  // however long the collector would take to answer. Spans exported after it are dropped. Not
  // from an I/O thread. Idempotent.
  void Stop(Duration grace = Duration(2000));

  std::uint64_t exported() const { return exported_.load(std::memory_order_relaxed); }
  // Spans that found the queue full (or came after Stop).
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Spans of batches the collector did not take.
  std::uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  std::size_t queued() const;
  const std::string& url() const { return url_text_; }

 private:
  OtlpExporter(Url url, std::string url_text, const Clock& clock, asio::any_io_executor executor,
               net::Client& client, OtlpSettings settings);
  // Sends queued spans until none is left.
  asio::awaitable<void> Drain();
  // Ends Drain's wait for a batch to fill, from any thread; counted so that Stop waits for it.
  // With mutex_ held.
  void CutWaitShortLocked();

  const std::string url_text_;
  const OtlpSettings settings_;
  asio::strand<asio::any_io_executor> strand_;
  asio::steady_timer wait_;  // on strand_: a batch filling
  net::RetryingPoster poster_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::deque<Span> queue_;  // guarded by mutex_
  bool sending_ = false;    // a Drain runs; guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::size_t posted_ = 0;  // OnStrand work not yet run; guarded by mutex_
  bool filling_ = false;    // on strand_: Drain waits for a batch to fill
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> failed_{0};
  FailureStreak drops_;    // the queue's overflow, told when it starts and ends
  FailureStreak failing_;  // the collector's failures, told when they start and end
};

}  // namespace settle::telemetry
