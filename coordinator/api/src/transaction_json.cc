#include "settle/api/transaction_json.h"
#include "settle/api/audit_json.h"
#include "settle/core/base64.h"

#include <nlohmann/json.hpp>

#include <limits>

#include "settle/engine/decision.h"
#include "settle/engine/workflow_engine.h"

namespace settle::api {
namespace {

using nlohmann::json;

json TimeOrNull(const std::optional<TimePoint>& t) {
  return t ? json(FormatTime(*t)) : json(nullptr);
}

json Seconds(Duration d) {
  if (d.count() % 1000 == 0) return d.count() / 1000;
  return static_cast<double>(d.count()) / 1000.0;
}

constexpr const char* kHidden = "(hidden)";

json OptionsJson(const storage::TransOptions& o, Secrets secrets) {
  json orders = json::object();
  for (const auto& [step, waits] : o.orders) orders[std::to_string(step)] = waits;
  const bool hidden = secrets == Secrets::kHidden;
  json headers = json::object();
  for (const auto& [name, value] : o.branch_headers) headers[name] = hidden ? kHidden : value;
  json options = {
      {"timeout_to_fail", Seconds(o.timeout_to_fail)},
      {"request_timeout", Seconds(o.request_timeout)},
      {"retry_interval", Seconds(o.retry_interval)},
      {"retry_limit", o.retry_limit},
      {"delay", Seconds(o.delay)},
      {"concurrent", o.concurrent},
      {"orders", orders},
      {"branch_headers", std::move(headers)},
      {"custom_data", hidden && !o.custom_data.empty() ? kHidden : o.custom_data},
  };
  // The transaction's own pause-after limit (custom_data's), when it has one.
  if (o.pause_after) options["pause_after"] = *o.pause_after;
  return options;
}

json GlobalJson(const storage::GlobalRecord& g, const calls::HostGates* gates, Secrets secrets) {
  json global = {
      {"id", g.id},
      {"gid", g.gid},
      {"trans_type", ToString(g.trans_type)},
      {"status", ToString(g.status)},
      {"create_time", FormatTime(g.create_time)},
      {"update_time", FormatTime(g.update_time)},
      {"finish_time", TimeOrNull(g.finish_time)},
      {"rollback_time", TimeOrNull(g.rollback_time)},
      {"rollback_reason", g.rollback_reason},
      {"next_cron_time", TimeOrNull(g.next_cron_time)},
      {"stuck", g.stuck},
      {"force_stopped", g.force_stopped},
      {"options", OptionsJson(g.options, secrets)},
  };
  // A workflow's result, as its client submitted it (docs/protocol.md §3.16): base64.
  if (!g.result.empty()) global["result"] = Base64Encode(g.result);
  // Its span (W3C trace context): find it in the tracing system by trace_id.
  if (!g.trace.empty()) {
    global["trace"] = {{"trace_id", g.trace.trace_id},
                       {"span_id", g.trace.span_id},
                       {"parent_span_id", g.trace.parent_id},
                       {"traceparent", g.trace.Traceparent()},
                       {"tracestate", g.trace.state}};
  }
  // Paused (by whom, when, why): what an unfinished transaction waits for first.
  if (g.paused && !IsTerminal(g.status)) {
    global["paused"] = {
        {"at", FormatTime(g.paused->at)}, {"by", g.paused->by}, {"reason", g.paused->reason}};
  }
  if (gates != nullptr && !IsTerminal(g.status)) {
    if (const std::optional<calls::HeldView> held = gates->HeldBy(g.gid)) {
      global["waiting_on_host"] = {{"host", held->host},
                                   {"circuit", engine::ToString(held->state)},
                                   {"reason", held->reason},
                                   {"next_try_at", TimeOrNull(held->next_try_at)}};
    }
  }
  return global;
}

json FailedAttemptsJson(const std::vector<storage::FailedAttempt>& attempts) {
  json array = json::array();
  for (const auto& a : attempts) array.push_back({{"at", FormatTime(a.at)}, {"error", a.error}});
  return array;
}

// `still_called`: whether the coordinator will call the row again (RowsStillCalled); only such
// a row has a next_retry_at, so that no row the coordinator is done with shows a time that
// never comes.
json BranchJson(const storage::BranchRecord& b, bool still_called, bool payloads) {
  json branch = {
      {"gid", b.gid},
      {"branch_id", b.branch_id},
      {"op", ToString(b.op)},
      {"url", b.url},
      {"status", ToString(b.status)},
      {"create_time", FormatTime(b.create_time)},
      {"update_time", FormatTime(b.update_time)},
      {"attempts", b.attempts},
      {"failures", b.failures},
      {"last_error", b.last_error},
      {"failed_attempts", FailedAttemptsJson(b.failed_attempts)},
      {"next_retry_at", still_called ? json(FormatTime(b.next_retry_at)) : json(nullptr)},
  };
  if (payloads) {
    // Text as it is; anything else (a protobuf message's bytes) as base64, saying so.
    const bool text = IsValidUtf8(b.data.view());
    branch["data"] = text ? b.data.str() : Base64Encode(b.data.view());
    branch["data_encoding"] = text ? "utf-8" : "base64";
  }
  return branch;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string CountsResponseBody(const std::vector<storage::UnfinishedCount>& counts,
                               FinishedSinceStart finished) {
  json unfinished = json::object();
  for (GlobalStatus s :
       {GlobalStatus::kPrepared, GlobalStatus::kSubmitted, GlobalStatus::kAborting}) {
    unfinished[std::string(ToString(s))] = 0;
  }
  std::size_t stuck = 0;
  for (const storage::UnfinishedCount& c : counts) {
    json& count = unfinished[std::string(ToString(c.status))];
    count = count.get<std::size_t>() + c.count;
    stuck += c.stuck;
  }
  return Dump(
      json{{"unfinished", std::move(unfinished)},
           {"stuck", stuck},
           {"finished_since_start", {{"succeed", finished.succeed}, {"failed", finished.failed}}}});
}

std::string HostsResponseBody(const std::vector<calls::HostView>& hosts) {
  json list = json::array();
  for (const calls::HostView& h : hosts) {
    list.push_back({{"host", h.host},
                    {"circuit", std::string(ToString(h.state))},
                    {"opens", h.opens},
                    {"waiting", h.waiting},
                    {"in_flight", h.in_flight},
                    {"held_at_cap", h.held_at_cap},
                    {"releasing", h.releasing},
                    {"open_for_ms", h.open_for.count()},
                    {"next_probe_in_ms", h.next_probe_in.count()},
                    {"oldest_waiting", h.oldest_waiting}});
  }
  return Dump(json{{"hosts", std::move(list)}});
}

std::string ProgressResponseBody(const storage::Transaction& tx) {
  json progresses = json::array();
  for (const storage::BranchRecord* step : engine::StepLogOf(tx)) {
    progresses.push_back({{"branch_id", step->branch_id},
                          {"op", ToString(step->op)},
                          {"status", ToString(step->status)},
                          {"bin_data", Base64Encode(step->data.view())}});
  }
  const storage::GlobalRecord& g = tx.global;
  const json body = {{"transaction",
                      {{"gid", g.gid},
                       {"status", ToString(g.status)},
                       {"rollback_reason", g.rollback_reason},
                       {"result", Base64Encode(g.result)}}},
                     {"progresses", std::move(progresses)},
                     {"dtm_result", "SUCCESS"}};
  // A rollback_reason is the client's own text, which may not be UTF-8: replaced, not refused.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string QueryResponseBody(const std::optional<storage::Transaction>& tx, bool payloads) {
  return QueryResponseBody(tx, payloads, 0, std::numeric_limits<std::size_t>::max());
}

// Each piece is dumped alone and joined, so that no document of the whole answer is built: the
// answer is its one copy.
std::string QueryResponseBody(const std::optional<storage::Transaction>& tx, bool payloads,
                              std::size_t position, std::size_t max_bytes,
                              const calls::HostGates* gates, Secrets secrets,
                              const std::vector<storage::AuditEntry>* audit) {
  if (!tx) return R"({"branches":[],"next_position":"","transaction":null})";
  json global = GlobalJson(tx->global, gates, secrets);
  if (audit != nullptr) {
    json entries = json::array();
    for (const storage::AuditEntry& e : *audit) entries.push_back(AuditEntryJson(e));
    global["audit"] = std::move(entries);
  }
  const std::string transaction = Dump(global);
  const std::vector<bool> still_called = engine::RowsStillCalled(*tx);
  std::string branches;
  std::size_t next = tx->branches.size();
  // The members around the branches, with room for the largest next_position.
  const std::size_t frame = transaction.size() + 64;
  for (std::size_t i = position; i < tx->branches.size(); ++i) {
    const std::string branch = Dump(BranchJson(tx->branches[i], still_called[i], payloads));
    // A page holds at least one branch, so that paging always moves on.
    if (i > position && frame + branches.size() + 1 + branch.size() > max_bytes) {
      next = i;
      break;
    }
    if (!branches.empty()) branches += ',';
    branches += branch;
  }
  std::string body;
  body.reserve(frame + branches.size());
  body += R"({"branches":[)";
  body += branches;
  body += R"(],"next_position":")";
  if (next < tx->branches.size()) body += std::to_string(next);
  body += R"(","transaction":)";
  body += transaction;
  body += '}';
  return body;
}

std::string ListResponseBody(const storage::ListPage& page) {
  return ListResponseBody(page, std::numeric_limits<std::size_t>::max());
}

std::string ListResponseBody(const storage::ListPage& page, std::size_t max_bytes,
                             const calls::HostGates* gates, Secrets secrets) {
  std::string transactions;
  std::optional<std::int64_t> next = page.next_position;
  constexpr std::size_t kFrame = 64;
  for (std::size_t i = 0; i < page.transactions.size(); ++i) {
    const std::string global = Dump(GlobalJson(page.transactions[i], gates, secrets));
    if (i > 0 && kFrame + transactions.size() + 1 + global.size() > max_bytes) {
      // Newest first: the next page starts with this one (ids below its id + 1).
      next = page.transactions[i].id + 1;
      break;
    }
    if (!transactions.empty()) transactions += ',';
    transactions += global;
  }
  std::string body = R"({"next_position":")";
  if (next) body += std::to_string(*next);
  body += R"(","transactions":[)";
  body += transactions;
  body += "]}";
  return body;
}

std::string TopicsResponseBody(const std::vector<storage::Topic>& topics) {
  return TopicsResponseBody(topics, "", std::numeric_limits<std::size_t>::max());
}

std::string TopicsResponseBody(const std::vector<storage::Topic>& topics, const std::string& after,
                               std::size_t max_bytes) {
  std::string list;
  std::string next;
  constexpr std::size_t kFrame = 64 + kMaxGidLength;
  const std::string* last = nullptr;
  for (const storage::Topic& topic : topics) {
    if (!after.empty() && topic.name <= after) continue;
    json subscribers = json::array();
    for (const storage::Subscriber& s : topic.subscribers) {
      subscribers.push_back(
          {{"url", s.url}, {"remark", s.remark}, {"create_time", FormatTime(s.create_time)}});
    }
    const std::string one =
        Dump(json{{"name", topic.name}, {"subscribers", std::move(subscribers)}});
    if (last != nullptr && kFrame + list.size() + 1 + one.size() > max_bytes) {
      next = *last;  // the next page starts after the last one shown
      break;
    }
    if (!list.empty()) list += ',';
    list += one;
    last = &topic.name;
  }
  std::string body = R"({"next_position":")";
  body += next;
  body += R"(","topics":[)";
  body += list;
  body += "]}";
  return body;
}

std::string ClockResponseBody(const drive::ClockReading& clock) {
  return json{{"reference", clock.reference},
              {"measured", clock.measured},
              {"offset_ms", clock.offset.count()},
              {"error_ms", clock.error.count()},
              {"following_ms", clock.following.count()},
              {"claiming", clock.claiming},
              {"max_clock_skew_ms", clock.max_skew.count()}}
      .dump();
}

}  // namespace settle::api
