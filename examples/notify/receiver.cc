#include "receiver.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace settle::notify {
namespace {

using nlohmann::json;

void Say(const std::string& line) {
  std::printf("receiver: %s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

Result<int> Receiver::Start(const std::string& host, int port) {
  participant_.OnAction("/api/notify", [this](const sdk::BranchRequest& r) { return Notify(r); })
      .OnPost("/alerts", [this](const sdk::HttpRequest& r) { return Alert(r); })
      .OnGet("/api/received", [this](const sdk::HttpRequest&) { return Received(); });
  return participant_.Start(host, port);
}

sdk::BranchReply Receiver::Notify(const sdk::BranchRequest& request) {
  std::lock_guard lock(mu_);
  const int delivery = ++deliveries_[request.gid];
  if (delivery <= fail_first_) {
    Say("delivery " + std::to_string(delivery) + " of " + request.gid + " refused with 503 (" +
        "--fail-first " + std::to_string(fail_first_) + ")");
    return sdk::BranchReply::Error(Status::Unavailable("receiver: not ready yet (demo)"));
  }
  notifications_.emplace_back(request.gid, request.body);
  Say("notified by " + request.gid + " at delivery " + std::to_string(delivery) + ": " +
      request.body);
  return sdk::BranchReply::Success();
}

sdk::HttpReply Receiver::Alert(const sdk::HttpRequest& request) {
  const json alert = json::parse(request.body, nullptr, false);
  if (!alert.is_object()) return {400, R"({"message":"an alert is a JSON object"})"};
  std::lock_guard lock(mu_);
  alerts_.push_back(request.body);
  Say("alert " + alert.value("event", "?") + " gid=" + alert.value("gid", "?") +
      " status=" + alert.value("status", "?") + " reason=" + alert.value("reason", ""));
  return {200, "{}"};
}

sdk::HttpReply Receiver::Received() {
  std::lock_guard lock(mu_);
  json notifications = json::array();
  for (const auto& [gid, body] : notifications_) {
    notifications.push_back({{"gid", gid}, {"body", body}, {"deliveries", deliveries_[gid]}});
  }
  json alerts = json::array();
  for (const std::string& alert : alerts_) alerts.push_back(json::parse(alert, nullptr, false));
  return {200, json{{"notifications", notifications}, {"alerts", alerts}}.dump(
                   -1, ' ', false, json::error_handler_t::replace)};
}

}  // namespace settle::notify
