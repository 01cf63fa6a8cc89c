#include "settle/coordinator/stuck_alerts.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

#include "settle/common/http_client_connection.h"

namespace settle::coordinator {
namespace {

constexpr std::size_t kMaxAnswerBytes = 4096;

// The unfinished branch that has failed the most times in a row: the one that made the
// transaction stuck.
const storage::BranchRecord* FailingBranch(const storage::Transaction& tx) {
  const storage::BranchRecord* worst = nullptr;
  for (const storage::BranchRecord& b : tx.branches) {
    if (b.status != BranchStatus::kPrepared) continue;
    if (worst == nullptr || b.failures > worst->failures) worst = &b;
  }
  return worst;
}

}  // namespace

std::string StuckAlertBody(const storage::Transaction& tx, TimePoint now) {
  nlohmann::json body = {{"event", "transaction_stuck"},
                         {"gid", tx.global.gid},
                         {"trans_type", ToString(tx.global.trans_type)},
                         {"status", ToString(tx.global.status)},
                         {"stuck_at", FormatTime(now)}};
  if (const storage::BranchRecord* b = FailingBranch(tx)) {
    body["branch_id"] = b->branch_id;
    body["op"] = ToString(b->op);
    body["url"] = b->url;
    body["failures"] = b->failures;
    body["last_error"] = b->last_error;
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::unique_ptr<WebhookAlerts>> WebhookAlerts::Start(const std::string& url,
                                                            const Clock& clock,
                                                            WebhookSettings settings) {
  Result<HttpUrl> parsed = ParseHttpUrl(url);
  if (!parsed) {
    return Status::InvalidArgument("alert webhook '" + url + "': " + parsed.status().message());
  }
  auto alerts =
      std::unique_ptr<WebhookAlerts>(new WebhookAlerts(std::move(*parsed), clock, settings));
  alerts->thread_ = std::thread([a = alerts.get()] { a->Loop(); });
  return alerts;
}

WebhookAlerts::WebhookAlerts(HttpUrl url, const Clock& clock, WebhookSettings settings)
    : url_(std::move(url)), clock_(clock), settings_(settings) {}

WebhookAlerts::~WebhookAlerts() { Stop(); }

void WebhookAlerts::TransactionStuck(const storage::Transaction& tx) {
  std::string body = StuckAlertBody(tx, clock_.Now());
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= settings_.max_queued) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("alert webhook: queue full, dropped the alert for gid={}", tx.global.gid);
      return;
    }
    queue_.push_back(std::move(body));
  }
  wake_.notify_one();
}

void WebhookAlerts::Stop(Duration grace) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) give_up_at_ = std::chrono::steady_clock::now() + grace;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string WebhookAlerts::Post(const std::string& body) {
  HttpClientConnection::Answer answer;
  std::unique_ptr<HttpClientConnection> connection =
      HttpClientConnection::Connect(url_.host, url_.port, settings_.timeout, answer);
  if (connection != nullptr) {
    const bool ipv6 = url_.host.find(':') != std::string::npos;
    const std::string host = (ipv6 ? "[" + url_.host + "]" : url_.host) + ":" +
                             std::to_string(url_.port);
    const std::string head = "POST " + PercentEncodeNonAscii(url_.path_and_query) +
                             " HTTP/1.1\r\nHost: " + host +
                             "\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    answer = connection->Exchange(head, body, settings_.timeout, kMaxAnswerBytes);
  }
  if (answer.failure != HttpClientConnection::Failure::kNone) {
    return HttpClientConnection::Describe(answer.failure);
  }
  if (answer.status < 200 || answer.status > 299) return "HTTP " + std::to_string(answer.status);
  return {};
}

void WebhookAlerts::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::string body = std::move(queue_.front());
    queue_.pop_front();
    const bool stopping = stopping_;
    const auto give_up_at = give_up_at_;
    lock.unlock();

    // Once stopping, each alert gets one attempt, and only while the grace lasts.
    const int attempts = stopping ? 1 : std::max(1, settings_.attempts);
    std::string error = "not attempted: shutting down";
    Duration delay = settings_.retry_delay;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      if (stopping && std::chrono::steady_clock::now() >= give_up_at) break;
      error = Post(body);
      if (error.empty() || attempt == attempts) break;
      lock.lock();
      const bool stopped = wake_.wait_for(lock, delay, [this] { return stopping_; });
      lock.unlock();
      if (stopped) break;
      delay *= 2;
    }
    if (error.empty()) {
      sent_.fetch_add(1, std::memory_order_relaxed);
    } else {
      failed_.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("alert webhook: could not deliver {}: {}", body, error);
    }
    lock.lock();
  }
}

}  // namespace settle::coordinator
