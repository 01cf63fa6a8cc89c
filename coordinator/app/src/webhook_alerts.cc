#include "settle/app/webhook_alerts.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <utility>

#include "settle/api/audit_json.h"

namespace settle::app {
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
  // A finished transaction here is a message that gave up delivering (retry_limit).
  const bool gave_up = IsTerminal(tx.global.status);
  nlohmann::json body = {{"event", gave_up ? "transaction_gave_up" : "transaction_stuck"},
                         {"gid", tx.global.gid},
                         {"trans_type", ToString(tx.global.trans_type)},
                         {"status", ToString(tx.global.status)},
                         {"stuck_at", FormatTime(now)}};
  if (gave_up) body["reason"] = tx.global.rollback_reason;
  if (const storage::BranchRecord* b = FailingBranch(tx)) {
    body["branch_id"] = b->branch_id;
    body["op"] = ToString(b->op);
    body["url"] = b->url;
    // The participant host, as the circuits and metrics name it (scheme://host:port).
    if (Result<Url> url = ParseUrl(b->url)) body["host"] = url->Origin();
    body["failures"] = b->failures;
    body["last_error"] = b->last_error;
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ParkedAlertBody(const storage::Transaction& tx, TimePoint now) {
  nlohmann::json body = nlohmann::json::parse(StuckAlertBody(tx, now));
  body["event"] = "transaction_parked";
  body.erase("stuck_at");
  body["parked_at"] = FormatTime(now);
  if (tx.global.paused) body["reason"] = tx.global.paused->reason;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string AdminActionAlertBody(const storage::AuditEntry& entry) {
  nlohmann::json body = api::AuditEntryJson(entry);
  body["event"] = "admin_action";
  if (entry.id == 0) body.erase("id");  // reported as it was stored: its id is the store's
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::unique_ptr<WebhookAlerts>> WebhookAlerts::Create(const std::string& url,
                                                             const Clock& clock,
                                                             asio::any_io_executor executor,
                                                             net::Client& client,
                                                             WebhookSettings settings) {
  Result<Url> parsed = ParseUrl(url);
  if (!parsed) {
    return Status::InvalidArgument("alert webhook '" + url + "': " + parsed.status().message());
  }
  return std::unique_ptr<WebhookAlerts>(
      new WebhookAlerts(std::move(*parsed), clock, std::move(executor), client, settings));
}

WebhookAlerts::WebhookAlerts(Url url, const Clock& clock, asio::any_io_executor executor,
                             net::Client& client, WebhookSettings settings)
    : clock_(clock),
      settings_(settings),
      strand_(asio::make_strand(executor)),
      poster_(std::move(url), client, clock, strand_,
              {.timeout = settings.timeout,
               .attempts = settings.attempts,
               .retry_delay = settings.retry_delay,
               .max_answer_bytes = kMaxAnswerBytes}),
      budget_(settings.per_creator_per_minute, Duration(60'000)) {}

WebhookAlerts::~WebhookAlerts() { Stop(); }

void WebhookAlerts::TransactionStuck(const storage::Transaction& tx) {
  EnqueueAbout(tx, StuckAlertBody(tx, clock_.Now()), "gid=" + tx.global.gid);
}

void WebhookAlerts::TransactionParked(const storage::Transaction& tx) {
  EnqueueAbout(tx, ParkedAlertBody(tx, clock_.Now()), "the parked gid=" + tx.global.gid);
}

void WebhookAlerts::EnqueueAbout(const storage::Transaction& tx, std::string body,
                                 const std::string& what) {
  std::size_t held_back = 0;
  {
    const std::lock_guard lock(budget_mutex_);
    if (!budget_.Admit(tx.global.creator, clock_.Now(), held_back)) {
      if (held_back_.fetch_add(1, std::memory_order_relaxed) % 1000 == 0) {
        spdlog::warn(
            "alert webhook: alerts about the transactions of creator={} are held back "
            "(more than {} a minute), {} so far: {}",
            tx.global.creator.empty() ? "nobody" : tx.global.creator,
            settings_.per_creator_per_minute, held_back_.load(std::memory_order_relaxed), what);
      }
      return;
    }
  }
  if (held_back > 0) {
    nlohmann::json with = nlohmann::json::parse(body, nullptr, false);
    if (with.is_object()) {
      with["held_back"] = held_back;
      body = with.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  Enqueue(std::move(body), what);
}

void WebhookAlerts::AdminAction(const storage::AuditEntry& entry) {
  Enqueue(AdminActionAlertBody(entry), "the admin action " + entry.action + " gid=" + entry.gid);
}

void WebhookAlerts::Enqueue(std::string body, const std::string& what) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= settings_.max_queued) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("alert webhook: queue full, dropped the alert for {}", what);
      return;
    }
    queue_.push_back(std::move(body));
    if (sending_) return;
    sending_ = true;
  }
  asio::co_spawn(strand_, Drain(), asio::detached);
}

void WebhookAlerts::Stop(Duration grace) {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  poster_.Stop(grace);
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return !sending_; });
}

asio::awaitable<void> WebhookAlerts::Drain() {
  for (;;) {
    std::string body;
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty()) {
        // Under the lock that TransactionStuck takes: an alert queued from now on starts a
        // new Drain. After this, nothing of `this` is touched (Stop may return and free it).
        sending_ = false;
        idle_.notify_all();
        co_return;
      }
      body = std::move(queue_.front());
      queue_.pop_front();
    }
    // Logged with the alert if it fails.
    std::string sending = body;
    const Status result = co_await poster_.Post(std::move(sending));
    if (result.ok()) {
      sent_.fetch_add(1, std::memory_order_relaxed);
    } else {
      failed_.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("alert webhook: could not deliver {}: {}", body, result.message());
    }
  }
}

}  // namespace settle::app
