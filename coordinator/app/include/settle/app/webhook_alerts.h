#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "settle/app/alert_budget.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/drive/stuck_alerts.h"
#include "settle/net/client.h"
#include "settle/net/retrying_poster.h"
#include "settle/storage/records.h"

namespace settle::app {

struct WebhookSettings {
  Duration timeout{5000};         // per attempt
  int attempts = 3;               // per alert
  Duration retry_delay{1000};     // before the second attempt, doubling after
  std::size_t max_queued = 1000;  // alerts waiting beyond this are dropped (and counted)
  // Alerts about one creator's transactions per minute (AlertBudget; 0: no limit); operators'
  // actions are not limited.
  std::size_t per_creator_per_minute = 60;
};

// The JSON an alert POSTs: {"event":"transaction_stuck","gid","trans_type","status",
// "branch_id","op","url","failures","last_error","stuck_at"} naming the failing branch. For a
// message that gave up delivering, "event" is "transaction_gave_up", "status" failed, and
// "reason" says why.
std::string StuckAlertBody(const storage::Transaction& tx, TimePoint now);
// The body of the alert for a transaction the pause-after policy parked: as a stuck one's, with
// "event": "transaction_parked", parked_at and the pause's reason.
std::string ParkedAlertBody(const storage::Transaction& tx, TimePoint now);
// An operator's action: {"event":"admin_action","id","at","actor","action","gid","target",
// "parameters","reason"} (the audit entry as GET /api/admin/audit shows it).
std::string AdminActionAlertBody(const storage::AuditEntry& entry);

// Sends each alert to a webhook (HTTP or HTTPS POST, application/json) from a coroutine of its
// own, so that a slow or failing webhook never holds up a transaction: alerts queue (bounded)
// and are sent one at a time in order, each attempted a few times with backoff
// (net::RetryingPoster; any answer but a 2xx is retried); what cannot be sent is logged and
// counted.
//
// Lifetime: `clock`, `client` and the executor's context must outlive it; Stop (or the
// destructor) returns once nothing is being sent. Thread-safety: TransactionStuck and the
// counters from any threads at once; Stop from one thread that is not an I/O thread.
class WebhookAlerts final : public drive::StuckAlerts {
 public:
  // InvalidArgument naming the URL when it is not an http(s):// URL. Sends through `client`
  // on `executor`; both must outlive the alerts.
  static Result<std::unique_ptr<WebhookAlerts>> Create(const std::string& url, const Clock& clock,
                                                       asio::any_io_executor executor,
                                                       net::Client& client,
                                                       WebhookSettings settings = {});
  // Stop().
  ~WebhookAlerts() override;

  void TransactionStuck(const storage::Transaction& tx) override;
  void TransactionParked(const storage::Transaction& tx) override;
  void AdminAction(const storage::AuditEntry& entry) override;

  // Gives what is queued one attempt each within `grace`, then returns once nothing is being
  // sent: an alert still on its way when the grace runs out is cut (failed). Not from an I/O
  // thread. Idempotent.
  void Stop(Duration grace = Duration(2000));

  std::uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  std::uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Alerts about transactions held back by their creator's budget (AlertBudget).
  std::uint64_t held_back() const { return held_back_.load(std::memory_order_relaxed); }

 private:
  WebhookAlerts(Url url, const Clock& clock, asio::any_io_executor executor, net::Client& client,
                WebhookSettings settings);
  // Queues `body` (dropped, counted and logged naming `what` when the queue is full).
  void Enqueue(std::string body, const std::string& what);
  // Queues the alert `body` about `tx` if its creator's budget admits it (with the number held
  // back before it as "held_back"), else counts it.
  void EnqueueAbout(const storage::Transaction& tx, std::string body, const std::string& what);
  // Sends queued alerts until the queue is empty.
  asio::awaitable<void> Drain();

  const Clock& clock_;
  const WebhookSettings settings_;
  asio::strand<asio::any_io_executor> strand_;
  net::RetryingPoster poster_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::deque<std::string> queue_;  // bodies; guarded by mutex_
  bool sending_ = false;           // a Drain runs; guarded by mutex_
  bool stopping_ = false;          // guarded by mutex_
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> held_back_{0};
  std::mutex budget_mutex_;
  AlertBudget budget_;  // guarded by budget_mutex_
};

}  // namespace settle::app
